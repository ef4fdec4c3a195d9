package extcdp

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"

	"github.com/livetab/livetab/internal/wire"
)

// Some CDP inputs that Chrome's own debugging port takes in its stride
// crash the whole browser when they arrive through chrome.debugger (see
// docs/decisions/2026-11-23-chrome-debugger-inputs-emulated-or-refused.md
// for the measured matrix). The relay is the one door every client goes
// through, so it never sends those raw: it emulates the ones a client
// expects to work and refuses the rest with an error that says why. Only
// the params of the methods concerned are decoded.

// probeTimeout bounds the in-page reads and writes of an emulation: a page
// that never answers (paused, busy) must not hold the command forever.
const probeTimeout = 10 * time.Second

// maxCPUThrottle is the highest Emulation.setCPUThrottlingRate passed on:
// DevTools' slowest preset. At 1000 the person's tab answered nothing.
const maxCPUThrottle = 20

// navigateSchemes are the URL schemes Page.navigate may take through the
// extension. chrome:// and the like detach the debugger (the extension may
// not debug them) and their debug hosts crash the tab or the browser
// (chrome://inducebrowsercrashforrealz with transitionType "address_bar");
// other schemes hand the URL to an external program on the person's
// machine. about: is checked apart: only blank and srcdoc stay in the tab.
var navigateSchemes = map[string]bool{
	"http": true, "https": true, "file": true, "data": true, "blob": true, "javascript": true,
}

// browserSchemes are schemes of Chrome's own pages: Chrome would load
// them, but an extension may not debug them (see navigateSchemes), so the
// relay refuses them with an error rather than answering as for a scheme
// Chrome does not know.
var browserSchemes = map[string]bool{
	"chrome": true, "chrome-untrusted": true, "chrome-extension": true, "chrome-search": true,
	"chrome-error": true, "chrome-native": true, "devtools": true, "view-source": true,
	"filesystem": true, "isolated-app": true, "edge": true,
}

// ownTabOnly says why each of these is refused on a tab the client did
// not open (or its popups). Chrome has no command that takes back the
// ones that set something: only the detach, which another client's session
// on the person's tab holds off (TestRedTeamVirtualTimeStopsNoPersonsTab,
// TestRedTeamLeftEmulationStaysOnNoTab).
var ownTabOnly = map[cdproto.MethodType]string{
	cdproto.CommandPageResetNavigationHistory:              "it would wipe the person's back/forward history",
	cdproto.CommandEmulationSetVirtualTimePolicy:           "Chrome gives a page its clock back only when the debugger leaves it",
	cdproto.CommandEmulationSetHardwareConcurrencyOverride: "Chrome gives a page its CPU count back only when the debugger leaves it",
	"Emulation.setVisibleSize":                             "Chrome gives a page its size back only when the debugger leaves it",
	cdproto.CommandPageSetFontSizes:                        "Chrome gives a page the person's font sizes back only when the debugger leaves it",
	// A frozen page, or one whose scripts may not run, answers the
	// watchdog still: the person's page stood still for as long as the
	// client stayed (TestRedTeamFrozenPersonsTab).
	cdproto.CommandPageSetWebLifecycleState:            "a frozen page stands still until the debugger leaves it",
	cdproto.CommandEmulationSetScriptExecutionDisabled: "the page's scripts stay off until the debugger leaves it",
	// A client's recording of the person's tab ran on after it left, the
	// recording's stream no one's: another client read it, and saw the
	// person's page of a site outside its own domains (red team, 3 of 3
	// and 4 of 4). Page.startScreencast (Playwright's video, Puppeteer's
	// screencast) is taken back instead.
	cdproto.CommandPageStartScreenRecording: "a recording runs on after the client leaves, and what it holds of the person's page would be no one's; use Page.startScreencast",
}

// browserWide says why each of these is refused on every tab: its effect
// is the browser's, not the tab's, and outlives the client and its tab.
var browserWide = map[cdproto.MethodType]string{
	// A screen added from a client's own tab with a device pixel ratio of
	// 100 made every tab of the window, the person's too, render at 100
	// device pixels per CSS pixel after the client left; the person's own
	// screenshots failed (red team, 3 of 3; headless Chrome).
	cdproto.CommandEmulationAddScreen:        "a screen is the browser's: it would change the person's tabs and outlive the client",
	cdproto.CommandEmulationUpdateScreen:     "a screen is the browser's: it would change the person's tabs and outlive the client",
	cdproto.CommandEmulationRemoveScreen:     "a screen is the browser's: it would change the person's tabs",
	cdproto.CommandEmulationSetPrimaryScreen: "a screen is the browser's: it would change the person's tabs and outlive the client",
}

// takesBack reports whether m, of ownTabOnly, only puts back what the
// page has without it: a page made active, its scripts allowed.
func takesBack(m *cdproto.Message) bool {
	var p struct {
		State string `json:"state"`
		Value *bool  `json:"value"`
	}
	if jsonv2.Unmarshal(m.Params, &p, wire.Options) != nil {
		return false
	}
	switch m.Method {
	case cdproto.CommandPageSetWebLifecycleState:
		return p.State == "active"
	case cdproto.CommandEmulationSetScriptExecutionDisabled:
		return p.Value != nil && !*p.Value
	}
	return false
}

// failInOrder refuses m once the tab has answered what the client sent
// before it on the same session, as Chrome answers a session's commands in
// order: a refusal that overtook Playwright's Page.getFrameTree failed the
// page's setup before the page had its URL, so the person's tab was listed
// with none (about 5 connects in 6).
func (c *Client) failInOrder(m *cdproto.Message, t *tab, sid, msg string) {
	c.inOrder(t, sid, func() { c.fail(m.ID, m.SessionID, -32000, msg) })
}

// inOrder runs answer once the tab has answered what the client sent
// before on the same session.
func (c *Client) inOrder(t *tab, sid string, answer func()) {
	c.tabCall(t, sid, cdproto.CommandPageGetFrameTree, jsonv2.Value("{}"), func(jsonv2.Value, error) { answer() })
}

// keepPersonsFonts answers Page.setFontFamilies on a tab the person opened
// without sending it: Chrome gives a page the person's fonts back only when
// the debugger leaves it, which another client's session may hold off. Not
// refused, as Page.setFontSizes is: Playwright sets default fonts on every
// page of a headless Chrome, and a page whose setup failed never answers
// its binding calls (page.exposeFunction hung there).
func (c *Client) keepPersonsFonts(m *cdproto.Message, t *tab, sid string) {
	var p struct {
		FontFamilies *jsonv2.Value `json:"fontFamilies"`
	}
	if err := jsonv2.Unmarshal(m.Params, &p, wire.Options); err != nil || p.FontFamilies == nil || !strings.HasPrefix(string(*p.FontFamilies), "{") {
		c.fail(m.ID, m.SessionID, -32602, "Invalid parameters: fontFamilies: an object expected")
		return
	}
	c.inOrder(t, sid, func() { c.reply(m.ID, m.SessionID, nil) })
}

// opened reports whether t is c's own: a tab it created, or a popup of one.
func (c *Client) opened(t *tab) bool {
	c.r.mu.Lock()
	mine := t.created && t.creator == c
	c.r.mu.Unlock()
	return mine || c.ownPopup(t)
}

// guardUnsafe looks at a command before forward sends it to tab t (or its
// child session sid) and reports whether it answered the command itself,
// by emulating or refusing it.
func (c *Client) guardUnsafe(m *cdproto.Message, t *tab, sid string, s *session) bool {
	c.cookiesOfThisPage(m, t, sid)
	if c.guardCookies(m) || c.refuseOutsideRequest(m) || c.refuseOutsideSource(m) || c.refuseSnapshot(m, t, sid) || c.guardCrashers(m) || c.guardGesture(m) || c.guardPoint(m) || c.guardText(m) || c.guardPaste(m) || c.ignoreCertificateErrors(m, m.SessionID) || c.guardTree(m, t, sid, s) || c.guardSize(m, t, sid, s) {
		return true
	}
	if why, ok := browserWide[m.Method]; ok {
		c.failInOrder(m, t, sid, fmt.Sprintf("livetab refuses %s: %s", m.Method, why))
		return true
	}
	if c.refuseWindowRecording(m, t, sid) {
		return true
	}
	if why, ok := ownTabOnly[m.Method]; ok && !c.opened(t) && !takesBack(m) {
		c.failInOrder(m, t, sid, fmt.Sprintf("livetab refuses %s on tab %d, which the person opened: %s; use a tab of your own (Target.createTarget)", m.Method, t.id, why))
		return true
	}
	switch m.Method {
	case cdproto.CommandPageNavigate:
	case cdproto.CommandPageCrash:
		// The renderer it kills may be the one of the person's other tabs
		// of the same site, and Chrome never answers it through the
		// extension.
		c.fail(m.ID, m.SessionID, -32000, "livetab refuses Page.crash: it would kill a renderer that the person's own tabs of the same site may share")
		return true
	case cdproto.CommandPageClose:
		if c.opened(t) {
			return false
		}
		c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab does not close a tab the person opened (Page.close on tab %d): detach with Target.detachFromTarget, or close it on purpose with Livetab.closeTab", t.id))
		return true
	case cdproto.CommandPageSetFontFamilies:
		if c.opened(t) {
			return false
		}
		c.keepPersonsFonts(m, t, sid)
		return true
	case cdproto.CommandEmulationSetDisplayFeaturesOverride:
		// An empty list of display features took the whole browser down
		// through chrome.debugger (TestAttackDisplayFeaturesOverride); a
		// list with a hinge is answered. No features is what clearing
		// the override gives a desktop page, so that is what is sent.
		var p struct {
			Features []jsonv2.Value `json:"features"`
		}
		if err := jsonv2.Unmarshal(m.Params, &p, wire.Options); err != nil {
			c.fail(m.ID, m.SessionID, -32602, fmt.Sprintf("livetab: invalid Emulation.setDisplayFeaturesOverride params: %v", err))
			return true
		}
		if len(p.Features) > 0 {
			return false
		}
		clear := *m
		clear.Method, clear.Params = cdproto.CommandEmulationClearDisplayFeaturesOverride, jsonv2.Value(`{}`)
		c.send(&clear, t, sid)
		return true
	case cdproto.CommandEmulationSetCPUThrottlingRate:
		var p struct {
			Rate float64 `json:"rate"`
		}
		if err := jsonv2.Unmarshal(m.Params, &p, wire.Options); err != nil {
			c.fail(m.ID, m.SessionID, -32602, fmt.Sprintf("livetab: invalid Emulation.setCPUThrottlingRate params: %v", err))
			return true
		}
		if p.Rate > maxCPUThrottle {
			c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab refuses a CPU throttling rate of %g: at most %d, as a slower page stops answering the person and the program alike", p.Rate, maxCPUThrottle))
			return true
		}
		return false
	default:
		return false
	}
	var p struct {
		URL     string `json:"url"`
		FrameID string `json:"frameId"`
	}
	if err := jsonv2.Unmarshal(m.Params, &p, wire.Options); err != nil {
		// Chrome might read what we cannot (a duplicate "url"): never pass
		// on params the relay did not check.
		c.fail(m.ID, m.SessionID, -32602, fmt.Sprintf("livetab: invalid Page.navigate params: %v", err))
		return true
	}
	scheme, rest, ok := urlScheme(p.URL)
	switch {
	case !ok:
		c.fail(m.ID, m.SessionID, -32000, "Cannot navigate to invalid URL")
		return true
	case scheme == "about":
		if page, _, _ := strings.Cut(rest, "#"); !aboutInTab(page) {
			c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab refuses Page.navigate to %q: Chrome turns about: pages other than about:blank into chrome:// pages, which an extension may not debug (the debugger would detach, and some of them crash the browser); open it in the browser yourself", p.URL))
			return true
		}
		if strings.HasPrefix(rest, "srcdoc") && rest != "srcdoc" {
			// In a frame, Chrome answers and then shows a page of that URL
			// that no extension may debug: chrome.debugger refused every
			// later command on the tab, for every client
			// (TestRedTeamNavigateToSrcdocKeepsTheTabDebuggable).
			c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab refuses Page.navigate to %q: Chrome loads about:srcdoc only from a frame's srcdoc attribute, and with a query or fragment it leaves a frame an extension may not debug (every later command on the tab would fail, as after setting location.hash in such a frame)", p.URL))
			return true
		}
	case browserSchemes[scheme]:
		c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab refuses Page.navigate to %q: through the extension only http, https, file, data, blob, javascript and about:blank URLs are navigated; %s: pages cannot be debugged by an extension (the debugger would detach, and chrome:// debug pages crash the tab or the browser); open it in the browser yourself", p.URL, scheme))
		return true
	case scheme == "file":
		if why := fileURLRefusal(p.URL); why != "" {
			c.fail(m.ID, m.SessionID, -32000, why)
			return true
		}
	case !navigateSchemes[scheme]:
		// Chrome hands a scheme it does not know to another program and
		// answers net::ERR_ABORTED, the tab staying where it was; the relay
		// gives that answer without the other program (and without the
		// navigation's start, which detaches an extension's debugger).
		c.reply(m.ID, m.SessionID, struct {
			FrameID    target.ID `json:"frameId"`
			IsDownload bool      `json:"isDownload"`
			ErrorText  string    `json:"errorText"`
		}{c.frameOf(t, sid, s), false, "net::ERR_ABORTED"})
		return true
	}
	main := c.frameOf(t, sid, s)
	if p.FrameID != "" && p.FrameID != string(main) {
		return false // a child frame: measured safe, and data: is allowed there
	}
	if scheme == "data" && sid == "" {
		doc, ok := dataDocument(rest)
		if !ok {
			return false
		}
		finished := make(chan struct{})
		c.dataNavigate(m, t, sid, p.URL, doc, func() { close(finished) })
		<-finished
		return true
	}
	if !strings.Contains(p.URL, "#") {
		return false // never the same document: Chrome loads a new one
	}
	// The lane waits for it: a command sent after this one must not
	// overtake the emulation's round trips (each bounded by probeTimeout).
	finished := make(chan struct{})
	c.sameDocumentNavigate(m, t, sid, p.URL, main, func() { close(finished) })
	<-finished
	return true
}

// urlScheme returns the lowercased scheme of u as Chrome parses it (GURL
// trims control characters and spaces at both ends and drops tabs and
// newlines anywhere) and what follows the colon.
func urlScheme(u string) (scheme, rest string, ok bool) {
	u = strings.TrimFunc(u, func(r rune) bool { return r <= ' ' })
	u = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(u)
	scheme, rest, ok = strings.Cut(u, ":")
	if !ok || scheme == "" {
		return "", "", false
	}
	for i, r := range scheme {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.'):
		default:
			return "", "", false
		}
	}
	return strings.ToLower(scheme), rest, true
}

// aboutInTab reports whether an about: URL (what follows "about:", without
// its fragment) is one Chrome loads in the tab rather than rewriting it to
// a chrome:// page.
func aboutInTab(page string) bool {
	page, _, _ = strings.Cut(page, "?")
	return page == "blank" || page == "srcdoc"
}

// frameOf returns the id of the main frame of the attachment a command
// goes to: Chrome names a page's (or an iframe target's) main frame with
// its target id.
func (c *Client) frameOf(t *tab, sid string, s *session) target.ID {
	if s != nil {
		return s.targetID()
	}
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	if ch := c.r.children[sid]; ch != nil {
		return ch.targetID
	}
	return t.targetID
}

// sameDocumentNavigate answers a main-frame Page.navigate whose URL has a
// fragment. If the URL is the current document's but for the fragment,
// Chrome would navigate within the document, and that crashes the browser
// through chrome.debugger on an about:blank tab; so the page navigates
// itself (location.href), as a link to a fragment would, and the client gets
// what Chrome answers for a same-document navigation: the frame id and no
// loaderId. Page.navigatedWithinDocument comes from Chrome as usual. Any
// other URL goes to Chrome as it came.
// finish runs once the command is answered or on its way to Chrome.
func (c *Client) sameDocumentNavigate(m *cdproto.Message, t *tab, sid, url string, frame target.ID, finish func()) {
	c.evaluate(t, sid, "location.href", func(href string, err error) {
		if err != nil {
			c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab: Page.navigate to %q was not sent: reading the page's URL first failed: %v; retry once the page answers", url, err))
			finish()
			return
		}
		switch same, unsure := sameDocument(href, url); {
		case unsure:
			c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab refuses Page.navigate from %s to %q: a same-document navigation of an about: page crashes the browser through chrome.debugger, and livetab cannot tell whether this one is; set location.href with Runtime.evaluate instead", href, url))
			finish()
			return
		case !same:
			c.send(m, t, sid)
			finish()
			return
		}
		q, _ := jsonv2.Marshal(url, wire.Options)
		c.evaluate(t, sid, "location.href = "+string(q), func(_ string, err error) {
			defer finish()
			if err != nil {
				c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab: navigating the page to %q within its document: %v", url, err))
				return
			}
			c.reply(m.ID, m.SessionID, struct {
				FrameID    target.ID `json:"frameId"`
				IsDownload bool      `json:"isDownload"`
			}{frame, false})
		})
	})
}

// sameDocument reports whether navigating from the page at href (as
// Chrome reports it: canonical) to url stays in the document: the same URL
// but for the fragment. Canonicalizing url as Chrome would is beyond the
// relay; unsure is set when the page is an about: one (where a
// same-document navigation crashes) and url is another about: URL it could
// not match.
func sameDocument(href, url string) (same, unsure bool) {
	scheme, rest, _ := urlScheme(url)
	cur, _, _ := strings.Cut(href, "#")
	want, _, _ := strings.Cut(scheme+":"+rest, "#")
	if want == cur {
		return true, false
	}
	curScheme, _, _ := urlScheme(href)
	return false, curScheme == "about" && scheme == "about"
}

// evaluate runs an expression in the main world of the attachment's main
// frame and passes on its value as a string, within probeTimeout.
func (c *Client) evaluate(t *tab, sid, expr string, done func(string, error)) {
	params, err := jsonv2.Marshal(map[string]any{"expression": expr, "returnByValue": true}, wire.Options)
	if err != nil {
		done("", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	f := &wire.Frame{Method: string(cdproto.CommandRuntimeEvaluate), Params: params, TabID: t.id, SessionID: sid}
	err = c.r.b.Go(ctx, f, func(rep *wire.Frame, err error) {
		cancel()
		if err == nil && rep.Error != nil {
			err = rep.Error
		}
		if err != nil {
			done("", err)
			return
		}
		var r struct {
			Result struct {
				Value any `json:"value"`
			} `json:"result"`
			ExceptionDetails *struct {
				Text      string `json:"text"`
				Exception *struct {
					Description string `json:"description"`
				} `json:"exception"`
			} `json:"exceptionDetails"`
		}
		if err := jsonv2.Unmarshal(rep.Result, &r, wire.Options); err != nil {
			done("", err)
			return
		}
		if e := r.ExceptionDetails; e != nil {
			if e.Exception != nil {
				done("", fmt.Errorf("%s", e.Exception.Description))
			} else {
				done("", fmt.Errorf("%s", e.Text))
			}
			return
		}
		s, _ := r.Result.Value.(string)
		done(s, nil)
	})
	if err != nil {
		cancel()
		done("", err)
	}
}

// send passes a checked command on to the tab as it came.
func (c *Client) send(m *cdproto.Message, t *tab, sid string) {
	f := &wire.Frame{Method: string(m.Method), Params: m.Params, TabID: t.id, SessionID: sid}
	ctx, cancel := context.WithTimeout(c.ctx, commandTimeout)
	err := c.r.b.Go(ctx, f, func(rep *wire.Frame, err error) {
		cancel()
		switch {
		case err != nil:
			c.fail(m.ID, m.SessionID, -32000, err.Error())
		case rep.Error != nil:
			c.deliver(&cdproto.Message{ID: m.ID, SessionID: m.SessionID, Error: withheld(m.Method, rep.Error)})
		case rep.Result == nil:
			c.reply(m.ID, m.SessionID, nil)
		default:
			c.reply(m.ID, m.SessionID, rep.Result)
		}
	})
	if err != nil {
		cancel()
		c.failErr(m.ID, m.SessionID, err)
	}
}

// refuseWindowRecording refuses a recording of the browser's window: the
// window shows whichever tab the person brings forward, their bank's too.
func (c *Client) refuseWindowRecording(m *cdproto.Message, t *tab, sid string) bool {
	if m.Method != cdproto.CommandPageStartScreenRecording {
		return false
	}
	var p struct {
		CaptureArea string `json:"captureArea"`
	}
	if err := jsonv2.Unmarshal(m.Params, &p, wire.Options); err != nil {
		c.fail(m.ID, m.SessionID, -32602, fmt.Sprintf("livetab: invalid %s params: %v", m.Method, err))
		return true
	}
	if p.CaptureArea == "" || p.CaptureArea == "target" {
		return false
	}
	c.failInOrder(m, t, sid, fmt.Sprintf("livetab refuses %s with captureArea %q: the window shows whichever tab the person brings forward; record the tab (captureArea \"target\")", m.Method, p.CaptureArea))
	return true
}
