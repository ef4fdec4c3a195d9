package extcdp

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"

	"github.com/livetab/livetab/bridge"
	"github.com/livetab/livetab/internal/wire"
)

// browserCommand answers a browser-level command. chrome.debugger has no
// browser target, so the relay is the browser: it answers from the tabs the
// extension reports, and turns target operations into tab operations
// (docs/decisions/2026-11-22-the-relay-answers-the-browser-level.md).
// sid is the session the command came on ("" at the root).
func (c *Client) browserCommand(m *cdproto.Message, sid target.SessionID) {
	ctx, cancel := context.WithTimeout(c.ctx, clientTimeout)
	defer cancel()
	r := c.r
	switch m.Method {
	case cdproto.CommandBrowserGetVersion:
		h := r.b.Hello()
		c.reply(m.ID, sid, &browser.GetVersionResult{
			ProtocolVersion: "1.3",
			Product:         product(h.UserAgent, h.FullVersion),
			UserAgent:       h.UserAgent,
			JsVersion:       "",
			Revision:        "",
		})
	case cdproto.CommandBrowserSetDownloadBehavior:
		c.setDownloadBehavior(m, sid)
	case cdproto.CommandBrowserCancelDownload:
		c.cancelDownload(m, sid)
	case cdproto.CommandBrowserClose:
		// Never close the user's browser: end this client's connection.
		c.reply(m.ID, sid, nil)
		if c.OnBrowserClose != nil {
			go c.OnBrowserClose()
		}
	case cdproto.CommandTargetGetBrowserContexts:
		r.mu.Lock()
		ids := []cdp.BrowserContextID{}
		for id := range c.contexts {
			ids = append(ids, id)
		}
		r.mu.Unlock()
		c.reply(m.ID, sid, map[string][]cdp.BrowserContextID{"browserContextIds": ids})
	case cdproto.CommandTargetCreateBrowserContext:
		// The user's Chrome has one profile and an extension cannot make
		// another: a browser context here is a group of tabs in that
		// profile, with its cookies and logins, which is what a livetab
		// user wants (Playwright's newContext, Puppeteer's
		// createBrowserContext, chromedp's WithNewBrowserContext).
		// Disposing of it closes its tabs.
		id := cdp.BrowserContextID(randomID())
		r.mu.Lock()
		c.contexts[id] = true
		r.mu.Unlock()
		c.reply(m.ID, sid, map[string]cdp.BrowserContextID{"browserContextId": id})
	case cdproto.CommandTargetDisposeBrowserContext:
		var p struct {
			BrowserContextID cdp.BrowserContextID `json:"browserContextId"`
		}
		if !c.params(m, sid, &p) {
			return
		}
		r.mu.Lock()
		known := c.contexts[p.BrowserContextID]
		delete(c.contexts, p.BrowserContextID)
		delete(c.heldCookies, p.BrowserContextID)
		var tabs []int64
		for _, t := range r.tabs {
			if known && t.context == p.BrowserContextID && t.created && !t.closed {
				tabs = append(tabs, t.id)
			}
		}
		r.mu.Unlock()
		if !known {
			c.fail(m.ID, sid, -32602, "Failed to find context with id "+string(p.BrowserContextID))
			return
		}
		for _, id := range tabs {
			// A tab that closed meanwhile is what disposing wants: Playwright
			// closes a page whose setup failed while it disposes the context,
			// and the dispose failed on "No tab with id" (TestClientsCompat,
			// ignoreHTTPSErrors, in a full run of the package).
			if _, err := r.b.Call(ctx, wire.CloseTab, 0, wire.TabParams{TabID: id}); err != nil && !strings.Contains(err.Error(), "No tab with id") {
				c.failErr(m.ID, sid, fmt.Errorf("livetab: closing tab %d of browser context %s: %w", id, p.BrowserContextID, err))
				return
			}
		}
		c.reply(m.ID, sid, nil)
	case cdproto.CommandTargetSetDiscoverTargets:
		var p target.SetDiscoverTargetsParams
		if !c.params(m, sid, &p) {
			return
		}
		if err := r.refreshTabs(ctx); err != nil {
			c.failErr(m.ID, sid, err)
			return
		}
		r.mu.Lock()
		c.discover = p.Discover
		if p.Discover && takesType(p.Filter, "browser") {
			// Puppeteer asks for every type ([{}]) and finds
			// browser.target() by this event, as Chrome sends it.
			params, _ := jsonv2.Marshal(map[string]*target.Info{"targetInfo": r.browserInfo()}, wire.Options)
			c.deliver(&cdproto.Message{Method: "Target.targetCreated", Params: params})
		}
		if p.Discover {
			for _, t := range r.tabs {
				if t.targetID != "" && c.lists(t) {
					params, _ := jsonv2.Marshal(map[string]*target.Info{"targetInfo": r.targetInfo(t)}, wire.Options)
					c.deliver(&cdproto.Message{Method: "Target.targetCreated", Params: params})
				}
			}
		}
		r.mu.Unlock()
		c.reply(m.ID, sid, nil)
	case cdproto.CommandTargetSetAutoAttach:
		var p target.SetAutoAttachParams
		if !c.params(m, sid, &p) {
			return
		}
		if p.AutoAttach && (p.Flatten == nil || !*p.Flatten) {
			c.fail(m.ID, sid, -32000, "livetab supports only flat sessions: set flatten:true")
			return
		}
		if err := r.refreshTabs(ctx); err != nil {
			c.failErr(m.ID, sid, err)
			return
		}
		r.mu.Lock()
		c.autoAttach = p.AutoAttach
		if p.AutoAttach {
			// Announce the existing tabs as attached before the reply, as
			// Chrome does. The debugger attaches on their first command.
			for _, t := range r.tabs {
				if t.targetID != "" {
					r.autoAttachFor(c, t, r.targetInfo(t))
				}
			}
		}
		r.mu.Unlock()
		c.reply(m.ID, sid, nil)
	case cdproto.CommandTargetGetTargets:
		if err := r.refreshTabs(ctx); err != nil {
			c.failErr(m.ID, sid, err)
			return
		}
		r.refreshChildren(ctx)
		c.reply(m.ID, sid, &target.GetTargetsResult{TargetInfos: c.targetInfos()})
	case cdproto.CommandTargetGetTargetInfo:
		var p target.GetTargetInfoParams
		if !c.params(m, sid, &p) {
			return
		}
		if p.TargetID == "" && sid != "" {
			r.mu.Lock()
			if s := r.sessions[sid]; s != nil && !s.browser {
				p.TargetID = s.targetID()
			}
			r.mu.Unlock()
		}
		if p.TargetID == "" || p.TargetID == r.browserID {
			c.reply(m.ID, sid, &target.GetTargetInfoResult{TargetInfo: r.browserInfo()})
			return
		}
		info, err := c.lookupInfo(ctx, p.TargetID)
		if err != nil {
			c.failErr(m.ID, sid, err)
			return
		}
		c.reply(m.ID, sid, &target.GetTargetInfoResult{TargetInfo: info})
	case cdproto.CommandTargetCreateTarget:
		c.createTarget(ctx, m, sid)
	case cdproto.CommandTargetAttachToTarget:
		c.attachToTarget(ctx, m, sid)
	case cdproto.CommandTargetAttachToBrowserTarget:
		r.mu.Lock()
		s, err := c.browserSession()
		r.mu.Unlock()
		if err != nil {
			c.failErr(m.ID, sid, err)
			return
		}
		c.reply(m.ID, sid, &target.AttachToBrowserTargetResult{SessionID: s.id})
	case cdproto.CommandTargetDetachFromTarget:
		var p struct {
			SessionID target.SessionID `json:"sessionId"`
			TargetID  target.ID        `json:"targetId"` // deprecated in CDP, still sent by some clients
		}
		if !c.params(m, sid, &p) {
			return
		}
		r.mu.Lock()
		var found *session
		for _, s := range r.sessions {
			if s.client == c && (s.id == p.SessionID || p.SessionID == "" && p.TargetID != "" && s.targetID() == p.TargetID) {
				found = s
				break
			}
		}
		if found != nil {
			r.endSession(found)
			if found.tab != nil {
				r.releaseIfUnused(found.tab)
			}
		}
		r.mu.Unlock()
		if found == nil {
			c.fail(m.ID, sid, -32602, "No session with given id")
			return
		}
		c.reply(m.ID, sid, nil)
	case cdproto.CommandTargetCloseTarget:
		c.closeTarget(ctx, m, sid)
	case cdproto.CommandTargetActivateTarget:
		var p target.ActivateTargetParams
		if !c.params(m, sid, &p) {
			return
		}
		t, err := c.lookupTab(ctx, p.TargetID)
		if err != nil {
			c.failErr(m.ID, sid, err)
			return
		}
		if c.refuseOthers(m, sid, t) {
			return
		}
		if _, err := r.b.Call(ctx, wire.ActivateTab, 0, wire.TabParams{TabID: t.id}); err != nil {
			c.failErr(m.ID, sid, err)
			return
		}
		c.reply(m.ID, sid, nil)
	default:
		if handled := c.livetabCommand(ctx, m, sid); handled {
			return
		}
		if c.windowCommand(ctx, m, sid) {
			return
		}
		if c.contextCookies(ctx, m, sid) || c.ignoreCertificateErrors(m, sid) {
			return
		}
		if m.Method == "Browser.resetPermissions" {
			// livetab grants none (browserLevelRefused): nothing to take
			// back, and Playwright's clearPermissions expects an answer.
			c.reply(m.ID, sid, nil)
			return
		}
		if why, ok := browserLevelRefused[m.Method]; ok {
			c.fail(m.ID, sid, -32000, fmt.Sprintf("livetab refuses %s at the browser level: %s", m.Method, why))
			return
		}
		c.fail(m.ID, sid, -32601, fmt.Sprintf("'%s' wasn't found: livetab answers browser-level methods itself and does not emulate this one", m.Method))
	}
}

var (
	productRE     = regexp.MustCompile(`Chrome/([0-9.]+)`)
	fullVersionRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+){3}$`)
)

// product turns a user agent into Browser.getVersion's product field,
// "Chrome/" and the version, as Chrome's own says it headless too, with
// the full version the extension read (full) in place of the reduced one
// when their major versions agree.
func product(ua, full string) string {
	m := productRE.FindStringSubmatch(ua)
	if m == nil {
		return "Chrome/0"
	}
	major, _, _ := strings.Cut(m[1], ".")
	if fullVersionRE.MatchString(full) && strings.HasPrefix(full, major+".") {
		return "Chrome/" + full
	}
	return "Chrome/" + m[1]
}

// targetInfos lists the targets as c sees them. Call without r.mu.
func (c *Client) targetInfos() []*target.Info {
	r := c.r
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	infos := []*target.Info{}
	for _, t := range r.tabs {
		if t.targetID == "" || !c.lists(t) {
			continue
		}
		if c.hidden.Hidden(t.targetID, now) {
			continue
		}
		infos = append(infos, r.targetInfo(t))
	}
	for _, ch := range r.children {
		if ch.info.Type == "iframe" && c.lists(ch.tab) {
			infos = append(infos, r.childInfo(ch))
		}
	}
	return infos
}

// lookupTab finds the tab of a target id, asking the extension once more
// when the relay does not know it yet. Another client's tab is not found.
func (c *Client) lookupTab(ctx context.Context, id target.ID) (*tab, error) {
	r := c.r
	r.mu.Lock()
	t := r.byTarget[id]
	ok := t != nil && c.sees(t)
	r.mu.Unlock()
	if ok {
		return t, nil
	}
	if t == nil {
		if err := r.refreshTabs(ctx); err != nil {
			return nil, err
		}
		r.mu.Lock()
		t = r.byTarget[id]
		ok = t != nil && c.sees(t)
		r.mu.Unlock()
	}
	if !ok {
		return nil, noTarget(id)
	}
	return t, nil
}

// noTarget is Chrome's error for an unknown target id. A tab of another
// client gets it too, so that nothing tells the two apart.
func noTarget(id target.ID) error {
	return &cdproto.Error{Code: -32602, Message: fmt.Sprintf("No target with given id found (%s): the tab was closed, or it is not one this client may use; list the tabs again", id)}
}

func (c *Client) lookupInfo(ctx context.Context, id target.ID) (*target.Info, error) {
	r := c.r
	r.mu.Lock()
	for _, ch := range r.children {
		if ch.targetID == id {
			if !c.lists(ch.tab) {
				r.mu.Unlock()
				return nil, noTarget(id)
			}
			info := r.childInfo(ch)
			r.mu.Unlock()
			return info, nil
		}
	}
	r.mu.Unlock()
	t, err := c.lookupTab(ctx, id)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !c.lists(t) {
		return nil, noTarget(id)
	}
	return r.targetInfo(t), nil
}

func (c *Client) createTarget(ctx context.Context, m *cdproto.Message, sid target.SessionID) {
	r := c.r
	var p target.CreateTargetParams
	if !c.params(m, sid, &p) {
		return
	}
	if p.URL == "" {
		p.URL = "about:blank"
	}
	if c.refuseURL(m, sid) {
		return
	}
	if why := fileURLRefusal(p.URL); why != "" {
		c.fail(m.ID, sid, -32000, why)
		return
	}
	// Not cancelled with the client: a tab Chrome opens must be known, to
	// be closed below should the client be gone by then. Left to itself it
	// would be nobody's, and everybody's. It is the relay's work, so that
	// Close waits for it (within its grace) rather than leave it waiting,
	// or the tab open.
	if !r.addWork() {
		c.failErr(m.ID, sid, ErrRelayClosed)
		return
	}
	defer r.work.Done()
	r.mu.Lock()
	if err := c.tooManyTabs(); err != nil {
		r.mu.Unlock()
		c.failErr(m.ID, sid, err)
		return
	}
	c.openingTabs++
	params := wire.CreateTabParams{
		URL:       p.URL,
		NewWindow: p.NewWindow != nil && *p.NewWindow,
		Active:    p.Background == nil || !*p.Background,
	}
	if c.pol.holdsTabs() {
		// The tab loads as Chrome creates it, before the relay could list
		// it as c's (TestRedTeamFirstMomentOfANewTab).
		params.HoldFor = c.pol.owner
	}
	if !params.NewWindow {
		// A tab not asked for in a new window joins the window of the
		// client's newest tab in its context (Chrome's "last active window"
		// is whichever the person or another program used last). A context
		// of the client's own is a window of its own, as a new browser
		// context is on Chrome: its first tab opens one. With no tab yet in
		// the default context, Chrome's current window takes it.
		own := c.contexts[p.BrowserContextID]
		params.NewWindow = own
		var newest *tab
		for _, o := range r.tabs {
			if o.context == p.BrowserContextID && o.creator == c && !o.closed && o.info.WindowID != 0 && (newest == nil || o.id > newest.id) {
				newest = o
			}
		}
		if newest != nil {
			params.NewWindow, params.WindowID = false, newest.info.WindowID
		}
	}
	r.mu.Unlock()
	octx, ocancel := context.WithTimeout(r.ctx, clientTimeout)
	defer ocancel()
	res, err := r.b.Call(octx, wire.CreateTab, 0, params)
	var refused *cdproto.Error
	if err != nil && params.WindowID != 0 && octx.Err() == nil && errors.As(err, &refused) {
		// That window went away meanwhile: where a first tab would go.
		// Only on Chrome's refusal: an extension that went away took the
		// first call with it, and a second would wait out its return.
		r.mu.Lock()
		params.NewWindow, params.WindowID = c.contexts[p.BrowserContextID], 0
		r.mu.Unlock()
		res, err = r.b.Call(octx, wire.CreateTab, 0, params)
	}
	var ti wire.TabInfo
	if err == nil && (jsonv2.Unmarshal(res, &ti, wire.Options) != nil || ti.TargetID == "") {
		err = errors.New("the extension opened a tab but reported no target id for it")
	}
	r.mu.Lock()
	// In the section that claims the tab: never counted twice, nor not at all.
	c.openingTabs--
	if err != nil {
		if errors.Is(err, bridge.ErrExtensionGone) {
			r.lostCreates++ // the tab may be open: refreshTabs closes it
		}
		r.mu.Unlock()
		c.failErr(m.ID, sid, fmt.Errorf("livetab: opening a tab: %w", err))
		return
	}
	if c.ctx.Err() != nil {
		// Closed meanwhile: Client.Close did not know this tab. Closed
		// here, not by goWork, which a closing relay no longer runs.
		r.mu.Unlock()
		r.b.Call(octx, wire.CloseTab, 0, wire.TabParams{TabID: ti.TabID})
		return
	}
	t := r.upsertTab(ti)
	r.claim(t, c)
	if c.contexts[p.BrowserContextID] {
		t.context = p.BrowserContextID
	}
	if !t.announced {
		t.announced = true
		r.broadcastTarget("Target.targetCreated", t)
	}
	// Clients that auto-attach must see the target attached before the
	// reply: Playwright looks the page up on the reply.
	r.autoAttach(t)
	if r.lostCreates > 0 {
		r.goWork(clientTimeout, func(ctx context.Context) { r.refreshTabs(ctx) })
	}
	held := c.heldCookies[p.BrowserContextID]
	delete(c.heldCookies, p.BrowserContextID)
	r.mu.Unlock()
	if held != nil {
		c.setHeldCookies(ctx, t, held)
	}
	c.reply(m.ID, sid, &target.CreateTargetResult{TargetID: t.targetID})
}

func (c *Client) attachToTarget(ctx context.Context, m *cdproto.Message, sid target.SessionID) {
	r := c.r
	var p target.AttachToTargetParams
	if !c.params(m, sid, &p) {
		return
	}
	if p.Flatten == nil || !*p.Flatten {
		c.fail(m.ID, sid, -32000, "livetab supports only flat sessions: set flatten:true")
		return
	}
	if p.TargetID == r.browserID {
		// Puppeteer's browser.target().createCDPSession(): a session on
		// the browser, announced before the reply as Chrome does.
		r.mu.Lock()
		s, err := c.browserSession()
		if err == nil {
			r.attachedEvent(c, s, r.browserInfo(), sid)
		}
		r.mu.Unlock()
		if err != nil {
			c.failErr(m.ID, sid, err)
			return
		}
		c.reply(m.ID, sid, &target.AttachToTargetResult{SessionID: s.id})
		return
	}
	r.mu.Lock()
	if err := c.tooManySessions(); err != nil {
		r.mu.Unlock()
		c.failErr(m.ID, sid, err)
		return
	}
	var ch *child
	for _, x := range r.children {
		if x.targetID == p.TargetID && c.sees(x.tab) {
			ch = x
			break
		}
	}
	r.mu.Unlock()
	var t *tab
	if ch != nil {
		// A frame is its tab's: the policy that keeps the client off the
		// tab keeps it off the tab's frames.
		if c.refuseAttach(m, sid, ch.tab) {
			return
		}
		t = ch.tab
	} else {
		var err error
		if t, err = c.lookupTab(ctx, p.TargetID); err != nil {
			c.failErr(m.ID, sid, err)
			return
		}
		// The policy first: its refusal names no URL the client may not
		// know.
		if c.refuseAttach(m, sid, t) {
			return
		}
		if !attachable(t.info.URL) {
			c.fail(m.ID, sid, -32000, fmt.Sprintf("livetab: Chrome does not let extensions debug %s (tab %d)", t.info.URL, t.id))
			return
		}
		if err := r.ensureAttached(ctx, t); err != nil {
			c.failErr(m.ID, sid, attachError(t, r.tabURL(t), err))
			return
		}
	}
	r.mu.Lock()
	s := r.newSession(c, t, ch)
	s.via = sid
	var info *target.Info
	if ch != nil {
		info = r.childInfo(ch)
	} else {
		info = r.targetInfo(t)
	}
	r.attachedEvent(c, s, info, sid)
	r.mu.Unlock()
	c.reply(m.ID, sid, &target.AttachToTargetResult{SessionID: s.id})
}

// closeTarget closes a tab that livetab opened. A tab the user opened is
// only detached from this client: cancelling a chromedp context must not
// close the user's work
// (docs/decisions/2026-11-22-cancel-closes-only-tabs-livetab-opened.md).
// An iframe target is never closed, because closing it kills its page.
func (c *Client) closeTarget(ctx context.Context, m *cdproto.Message, sid target.SessionID) {
	r := c.r
	var p target.CloseTargetParams
	if !c.params(m, sid, &p) {
		return
	}
	r.mu.Lock()
	var mine []*session
	for _, s := range r.sessions {
		if s.client == c && s.targetID() == p.TargetID {
			mine = append(mine, s)
		}
	}
	t := r.byTarget[p.TargetID]
	if t != nil && !c.sees(t) {
		r.mu.Unlock()
		c.failErr(m.ID, sid, noTarget(p.TargetID))
		return
	}
	isChild := false
	for _, ch := range r.children {
		if ch.targetID == p.TargetID && c.sees(ch.tab) {
			isChild = true
		}
	}
	r.mu.Unlock()
	if t == nil && !isChild {
		var err error
		if t, err = c.lookupTab(ctx, p.TargetID); err != nil {
			c.failErr(m.ID, sid, err)
			return
		}
	}
	if t != nil && !isChild && (t.created || c.ownPopup(t)) {
		r.mu.Lock()
		r.buryTab(t) // while the behavior of its session is heard
		r.mu.Unlock()
		if _, err := r.b.Call(ctx, wire.CloseTab, 0, c.closeParams(t)); err != nil {
			c.failErr(m.ID, sid, fmt.Errorf("livetab: closing tab %d: %w", t.id, err))
			return
		}
		// The extension's tabRemoved event ends the sessions; end this
		// client's now so its detach precedes the reply.
		r.mu.Lock()
		t.closed = true
		for _, s := range mine {
			r.endSession(s)
		}
		r.mu.Unlock()
		c.reply(m.ID, sid, closeResult)
		return
	}
	r.mu.Lock()
	for _, s := range mine {
		r.endSession(s)
		if s.tab != nil {
			r.releaseIfUnused(s.tab)
		}
	}
	if !isChild {
		c.hidden.Hide(p.TargetID, time.Now())
	}
	r.mu.Unlock()
	c.reply(m.ID, sid, closeResult)
}

// closeResult is Target.closeTarget's answer; chromedp ignores it, others
// read success.
var closeResult = jsonv2.Value(`{"success":true}`)

// refreshChildren asks each child session for its target info: a child is
// attached before its document loads, with an empty URL, and
// chrome.debugger has no targetInfoChanged for it.
func (r *Relay) refreshChildren(ctx context.Context) {
	r.mu.Lock()
	kids := make([]*child, 0, len(r.children))
	for _, ch := range r.children {
		kids = append(kids, ch)
	}
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for _, ch := range kids {
		wg.Go(func() {
			f := &wire.Frame{Method: string(cdproto.CommandTargetGetTargetInfo), TabID: ch.tab.id, SessionID: ch.sid, Params: emptyObject}
			done := make(chan *wire.Frame, 1)
			if r.b.Go(ctx, f, func(rep *wire.Frame, err error) {
				if err != nil {
					rep = nil
				}
				done <- rep
			}) != nil {
				return
			}
			rep := <-done
			if rep == nil || rep.Error != nil {
				return
			}
			var res target.GetTargetInfoResult
			if jsonv2.Unmarshal(rep.Result, &res, wire.Options) != nil || res.TargetInfo == nil {
				return
			}
			r.mu.Lock()
			ch.info.URL, ch.info.Title = res.TargetInfo.URL, res.TargetInfo.Title
			r.mu.Unlock()
		})
	}
	wg.Wait()
}

// browserSession opens a session of c's on the browser. Call with r.mu
// held.
func (c *Client) browserSession() (*session, error) {
	if err := c.tooManySessions(); err != nil {
		return nil, err
	}
	s := &session{id: target.SessionID(randomID()), client: c, browser: true}
	c.r.sessions[s.id] = s
	c.sessions++
	return s, nil
}

// browserInfo is the browser's own target, as Chrome describes it.
func (r *Relay) browserInfo() *target.Info {
	return &target.Info{TargetID: r.browserID, Type: "browser", Attached: true}
}

// takesType reports whether a target filter lets targets of type typ
// through: its first entry that matches decides, and none matching leaves
// the target out. No filter is Chrome's default, which leaves out the
// browser and tabs' own "tab" targets.
func takesType(f target.Filter, typ string) bool {
	if len(f) == 0 {
		return typ != "browser" && typ != "tab"
	}
	for _, e := range f {
		if e.Type == "" || e.Type == typ {
			return !e.Exclude
		}
	}
	return false
}
