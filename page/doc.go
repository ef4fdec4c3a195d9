// Package page is an agent-friendly layer over a browser tab: an LLM looks at
// a page, picks an element by number, acts, and looks again.
//
// A [Page] works over any chromedp tab context — a livetab tab in a person's
// own Chrome, or a tab of chromedp's ExecAllocator — and sends nothing but
// commands on the tab's session (Browser.setDownloadBehavior too, with
// WithDownloadDir), plus the browser-level ones chromedp itself sends to
// open, attach to and close tabs.
//
// # Snapshots and element indexes
//
// [Page.Snapshot] lists the elements a person could act on: visible links,
// buttons, fields, checkable and ARIA-role elements, editable regions, click
// targets (cursor:pointer, onclick, tabindex) and media, including those in
// open shadow roots, same-origin iframes, and cross-origin iframes (through
// the iframe's own target, or an isolated world when the frame shares the
// page's process). While a modal dialog is open only its elements are listed,
// and elements under an overlay are left out. Each listed element gets an
// index and a data-livetab-ref="<snapshot id>-<index>" attribute, and the
// snapshot comes with a compact text for a model:
//
//	[12] button "Generate"
//	[13] textbox "Prompt" value="a red fox"
//
// Indexes are valid until the next snapshot of the tab or a navigation. The
// page side keeps a reference to each element, out of reach of page scripts,
// so an action on an index whose element was replaced, removed, or belongs to
// an earlier document fails with [ErrStaleElement] instead of acting on
// whatever took its place.
//
// Everything that comes from the page — title, URL, names, values, read
// content — sits in a <page id=…> block whose id is random. A
// program that gives the text to a model tells it once what the blocks are
// ([UntrustedNote]); the results do not repeat it.
//
// [Page.Find] searches every element a snapshot would list — the whole
// page, all frames and open shadow roots, not only the elements nearest the
// viewport — by text, role or name, and gives the matches indexes the
// actions take at once. It adds to the last snapshot: its indexes stay
// valid, and an element it listed keeps its index.
//
// A snapshot lists at most [DefaultMaxElements] elements (those nearest the
// viewport), or only those in the viewport with ViewportOnly, and its text
// stays under 24 KiB. The fixture page of the tests (a nav bar, a form, shadow
// DOM, a same-origin and a cross-origin iframe, hidden and covered elements,
// 1,300 nodes) gives 69 elements and about 3 KB of text, in about 20 ms, plus
// the attach to the cross-origin frame the first time.
//
// # Actions
//
// Actions take a [Ref]: [Index] from the last snapshot, or a CSS [Selector].
// Clicks, hovers and drags are trusted mouse events at a point of the element
// that is on top, after scrolling it into view; typing and key chords are
// trusted key events. A hidden, disabled or covered element is refused with
// [ErrNotVisible], [ErrDisabled] or [ErrCovered]; an action that starts a
// navigation waits for the new page; a navigation during typing stops it with
// [ErrNavigated].
//
// Then every action settles ([WithSettle], at most 1 s by default): it waits
// until no request is in flight and the document has not changed for a
// moment since the input, which a [Page.Do] action may date with [InputDone]
// and may have settled already with [SettleNow]. The moment is 100 ms, or,
// once the page reacted (it changed, sent a request or navigated), two
// frames and 20 ms after its last change or response: a page that shows no
// reaction yet may have one on a timer. It asks for frames, so that
// idle-time work such as a canvas encode runs, and never wraps the page's
// own objects, which a site's bot checks would see. Its result says what it
// waited for and what changed — elements
// added and removed, field values, alerts and live regions, headings. With
// [WithDownloadDir] a download an action starts goes to that directory, and
// the result names the file, its size, MIME type and SHA-256.
//
// [Page.FillForm] fills many fields (text, select, checkbox, radio, file)
// in one call, each by index or selector, and can click the submit button
// after: the guard sees every field's action before any runs, a field that
// fails does not stop the others, and the result says what each field holds
// afterwards.
//
// # Dialogs
//
// A JavaScript dialog never wedges the tab. Under [DialogAsk] (the default)
// the action that opened it returns a [*DialogOpenError] and the caller
// answers with [Page.HandleDialog]; [DialogAccept] and [DialogDismiss] answer
// at once and report it.
//
// # Guards
//
// [WithGuard] puts a [Guard] (package policy has one) in charge of the
// Page: it sees every action before anything reaches the tab — its [Kind]
// (read, act, navigate, eval, upload, capture), the tab and its URL, the
// element as the last snapshot listed it, the navigation target — and a
// denial returns its error untouched. It also holds every document request
// of the Page's tabs (Fetch.requestPaused, which works through
// chrome.debugger too), so a navigation is checked on each redirect hop; a
// refused request fails with net::ERR_BLOCKED_BY_CLIENT and the action
// that caused it reports a [*BlockedError]. [Page.Do] runs other packages
// (capture, upload) on the current tab as a guarded action, and
// [Page.AttachTab] takes in a tab the person shared.
//
// # Tools
//
// [Tools], [Page.Run] and [Page.Call] wrap all of this for an LLM
// tool-calling loop or an MCP server: one argument struct per tool
// ([ClickArgs] and the others, whose tags are the tool's JSON Schema), run
// typed or from JSON by name, returning text, an image, or both, with every
// failure turned into a readable tool error. Package agent serves them over
// MCP and generates their schemas (agent.Schema).
package page
