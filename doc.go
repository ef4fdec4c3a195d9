// Package livetab drives a person's real, logged-in Chrome from Go, through
// an MV3 extension that uses chrome.debugger, and stays compatible with
// chromedp.
//
// Sites behind Google sign-in, two-factor prompts and bot checks cannot be
// automated from a fresh headless browser, and Chrome 136 and later ignore
// --remote-debugging-port on the default profile. An installed extension can
// still speak the DevTools protocol to the tabs of the profile that has the
// logins. livetab is that extension plus the Go side.
//
// The road a command travels, and its events back:
//
//	chromedp → extcdp.Transport → extcdp.Relay → bridge → WebSocket → extension → chrome.debugger → tab
//
// The packages, from the bottom up:
//
//   - extension: the MV3 extension itself, embedded; writes it out for
//     "Load unpacked" and launches a Chromium with it for demos and tests.
//   - bridge: the loopback WebSocket server the extension dials: pairing
//     by mutual proof, Origin and Host checks, request/reply correlation,
//     ordered events, chunked large frames, reconnection.
//   - extcdp: the browser that chrome.debugger lacks. Its Relay
//     (NewRelay, Close) answers the browser-level CDP (targets, sessions,
//     Browser.*) and passes page traffic through untouched; NewAllocator
//     gives chromedp an allocator on it, Relay.Handler a CDP endpoint.
//     Cancelling a context closes only tabs livetab opened.
//   - livetabcdp: the Livetab CDP domain, what only the extension can do
//     (shared tabs, a client's policy, closing or keeping a tab), declared
//     as cdproto declares Chrome's, with IsUnsupported for plain Chrome.
//   - page, capture, upload: an agent-friendly tab (snapshot, indexes,
//     actions, tools), media out and files in, over any chromedp tab; they
//     import chromedp and cdproto only, never bridge or extcdp.
//   - policy: what an agent may do: domains, shared tabs, read-only,
//     evaluation, confirmation, audit.
//   - agent: page's tools, with tabs, capture and upload, as an MCP server
//     a program can mount; `livetab mcp` serves it on stdio.
//   - cmd/livetab: the CLI (extension, pair, serve, endpoint, status,
//     doctor, mcp), a thin main over these packages.
//   - internal/wire: the frames between the bridge and the extension;
//     internal/inpage: the one in-page call layer of page, capture and
//     upload.
//
// Other processes share one extension through `livetab serve` (package
// cmd/livetab), which serves the relay as a standard CDP endpoint on
// 127.0.0.1 and writes its URL, token included, to a 0600 endpoint file.
// Playwright and Puppeteer take the URL that `livetab endpoint` prints.
// [ConnectNative] gives the same allocator over Chrome's own remote
// debugging (DevToolsActivePort) for users without the extension, with the
// same rule: cancelling never closes a tab livetab did not open.
//
// [Connect] is the one call that finds a browser and returns a chromedp
// allocator context on it. It tries, in order, a running serve (its
// endpoint file), the extension dialing a bridge in this process (bounded
// wait), Chrome's own remote debugging, and, only when asked, a launched
// Chromium with the extension; [FromContext] says which way it took and
// why it skipped the others.
//
// A minimal program:
//
//	b, err := bridge.Listen(ctx, bridge.Options{})
//	allocCtx, cancel := extcdp.NewAllocator(ctx, b)
//	defer cancel()
//	tabCtx, cancel := chromedp.NewContext(allocCtx)
//	defer cancel()
//	err = chromedp.Do(tabCtx, chromedp.Navigate("https://example.com"))
//	title, err := chromedp.Run(tabCtx, chromedp.Title())
package livetab
