package extcdp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"

	"github.com/livetab/livetab/internal/hidden"
	"github.com/livetab/livetab/internal/wire"
	"github.com/livetab/livetab/livetabcdp"
)

// ErrClientClosed is the error of [Client.Next] after the client closed.
var ErrClientClosed = errors.New("extcdp: client closed")

// Client is one CDP connection to the relay, as a browser endpoint sees it:
// it sends commands with [Client.Handle] and reads replies and events with
// [Client.Next]. Ids and sessions are its own; a client that goes away
// closes the tabs it created and detaches from the rest, and disturbs no
// other client.
type Client struct {
	r *Relay
	// ctx ends when the client closes: the commands it still has at the
	// extension are dropped there.
	ctx    context.Context
	cancel context.CancelFunc

	// holds keeps a session's execution-context events behind the
	// replies they must not overtake (order.go).
	holds orderHolds

	// notes are the requests a client held to domains heard of
	// (outside.go).
	notes requestNotes

	qmu      sync.Mutex
	queue    []*cdproto.Message
	head     int
	queued   int64 // bytes of the unread messages
	limits   *queueLimits
	overflew bool
	signal   chan struct{}
	closed   bool

	lanes lanes

	// scripts are the client's compiled scripts on tabs it did not open
	// (wedge.go).
	scripts keptScripts

	// inFlight counts the commands waiting for their reply; the endpoint
	// stops reading a client that has too many (see waitInFlight).
	inFlight   atomic.Int64
	inFlightCh chan struct{}

	// The fields below are guarded by r.mu.
	discover       bool
	autoAttach     bool
	downloadEvents bool
	// download is where the client asked downloads to go
	// (Browser.setDownloadBehavior at the browser level); sessionDownloads,
	// the same asked on one of its sessions, whose events then arrive on
	// that session, as from Chrome.
	download         downloadBehavior
	sessionDownloads map[target.SessionID]downloadBehavior
	// hidden holds user tabs this client "closed": they stay open, so they
	// are left out of its target lists for a moment, which is what a client
	// that waits for a closed target to disappear (chromedp) looks for.
	hidden hidden.Tabs
	// contexts are the browser contexts the client made: groups of tabs
	// in the user's one profile (see browserCommand).
	contexts map[cdp.BrowserContextID]bool
	// heldCookies are the cookies set for a browser context before any
	// page of it was open, held for its first (contextcookies.go).
	heldCookies map[cdp.BrowserContextID][]jsonv2.Value
	// livetabEvents: the client asked for the Livetab domain's events
	// (Livetab.enable); under the relay's mu.
	livetabEvents bool
	// pol is the client's own policy (clientpolicy.go).
	pol clientPolicy
	// closing holds the tabs of a closed client that are being closed.
	closing map[int64]bool
	// shutting are the closes of c's tabs under way, each closed when its
	// tabs are gone; under the relay's mu. c's policy holds them until then.
	shutting []chan struct{}
	// sessions counts the client's sessions (maxSessions).
	sessions int
	// maxTabs bounds the tabs the client may have open (0: no bound, the
	// in-process transport's program); openingTabs counts its
	// createTargets on their way. Under r.mu.
	maxTabs, openingTabs int

	// id and name are how the popup shows the client (person.go); since,
	// when it connected. name is the program's choice, under nameMu.
	id     string
	nameMu sync.Mutex
	name   string
	since  time.Time
	// stopped: the person stopped the client in the popup; stoppedTabs,
	// the tabs it drove that the person stopped. Under r.mu.
	stopped     bool
	stoppedTabs map[int64]bool
	// onStop runs once the person stopped the client: the endpoint
	// disconnects it.
	onStop func()

	// OnBrowserClose, when set, runs after the client sent Browser.close:
	// the relay never closes the user's browser, it ends the connection.
	OnBrowserClose func()
}

// NewClient connects a new client to the relay.
func (r *Relay) NewClient() *Client {
	c := &Client{r: r, signal: make(chan struct{}, 1), inFlightCh: make(chan struct{}, 1), hidden: map[target.ID]time.Time{}, contexts: map[cdp.BrowserContextID]bool{},
		name: "CDP client", since: time.Now()}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	r.mu.Lock()
	c.id = r.nextClientID()
	if r.closed {
		r.mu.Unlock()
		c.closed = true // a relay that closed takes no client
		c.cancel()
		return c
	}
	r.clients[c] = struct{}{}
	r.mu.Unlock()
	r.touchActivity()
	return c
}

// deliver queues a message for the client. It never blocks, so the bridge's
// reader goroutine is never held up by a slow client.
//
// A client that leaves more unread than its limits allow is cut off: its
// queue is dropped and its connection closed with the reason.
func (c *Client) deliver(m *cdproto.Message) {
	if m.Method != "" {
		m = c.scrubOutside(m)
	}
	if m.Method != "" && c.heldBack(m) {
		return
	}
	c.queueMessage(m)
	if m.Method == "" {
		for _, e := range c.replied(m) {
			c.queueMessage(e)
		}
	}
}

// queueMessage queues m, never blocking (see deliver).
func (c *Client) queueMessage(m *cdproto.Message) {
	if m.Method == "" && c.inFlight.Add(-1) >= 0 {
		select {
		case c.inFlightCh <- struct{}{}:
		default:
		}
	}
	n := size(m)
	c.qmu.Lock()
	if c.closed || c.overflew {
		c.qmu.Unlock()
		return
	}
	if l := c.limits; l != nil && c.queued > 0 {
		// One large reply on an empty queue always passes: only what
		// piles up unread counts against the client.
		over := ""
		switch {
		case c.queued+n > l.max:
			over = fmt.Sprintf("livetab: this client left %d MiB of replies and events unread (the limit is %d MiB): it was disconnected; read the socket while you send", (c.queued+n)>>20, l.max>>20)
		case l.total.Load()+n > l.maxTotal && c.queued+n > l.max/8:
			over = fmt.Sprintf("livetab: the endpoint's clients left %d MiB unread in all and this one %d MiB of it: it was disconnected; read the socket while you send", (l.total.Load()+n)>>20, (c.queued+n)>>20)
		}
		if over != "" {
			c.overflew = true
			l.total.Add(-c.queued)
			c.queue, c.head, c.queued = nil, 0, 0
			c.qmu.Unlock()
			go l.overflow(over)
			return
		}
	}
	c.queue = append(c.queue, m)
	c.queued += n
	if c.limits != nil {
		c.limits.total.Add(n)
	}
	c.qmu.Unlock()
	select {
	case c.signal <- struct{}{}:
	default:
	}
}

// sent counts a command the client sent; its reply, whatever path it takes,
// goes through deliver.
func (c *Client) sent() { c.inFlight.Add(1) }

// waitInFlight waits until the client has fewer than max commands without
// a reply, or ctx ends.
func (c *Client) waitInFlight(ctx context.Context, max int64) error {
	for c.inFlight.Load() >= max {
		select {
		case <-c.inFlightCh:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Next returns the next reply or event for the client.
func (c *Client) Next(ctx context.Context) (*cdproto.Message, error) {
	for {
		c.qmu.Lock()
		if c.head < len(c.queue) {
			m := c.queue[c.head]
			c.queue[c.head] = nil
			c.head++
			n := size(m)
			c.queued -= n
			if c.limits != nil {
				c.limits.total.Add(-n)
			}
			if c.head == len(c.queue) {
				c.queue, c.head = c.queue[:0], 0
			}
			c.qmu.Unlock()
			return m, nil
		}
		closed := c.closed
		c.qmu.Unlock()
		if closed {
			return nil, ErrClientClosed
		}
		select {
		case <-c.signal:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Close ends the client: the tabs it created are closed, its other sessions
// detached (and the debugger released where no one else uses it).
func (c *Client) Close() {
	c.qmu.Lock()
	if c.closed {
		c.qmu.Unlock()
		return
	}
	c.closed = true
	if c.limits != nil {
		c.limits.total.Add(-c.queued)
	}
	c.queue, c.head, c.queued = nil, 0, 0
	c.qmu.Unlock()
	c.cancel()
	select {
	case c.signal <- struct{}{}:
	default:
	}

	c.release()
	// The policy ends once the tabs it holds are gone: dropped first, a
	// popup still waiting for its close ran free in between and reached a
	// private address (TestRedTeamHostileRequestsAfterTheAgentEnds, once
	// in a CI run).
	c.r.mu.Lock()
	shutting := c.shutting
	c.r.mu.Unlock()
	go func() {
		for _, ch := range shutting {
			<-ch
		}
		c.dropPolicy()
	}()
}

func (c *Client) reply(id int64, sid target.SessionID, result any) {
	var v jsonv2.Value
	switch res := result.(type) {
	case nil:
		v = emptyObject
	case jsonv2.Value:
		v = res
	default:
		var err error
		if v, err = jsonv2.Marshal(res, wire.Options); err != nil {
			c.fail(id, sid, -32603, err.Error())
			return
		}
	}
	c.deliver(&cdproto.Message{ID: id, SessionID: sid, Result: v})
}

func (c *Client) fail(id int64, sid target.SessionID, code int64, msg string) {
	c.deliver(&cdproto.Message{ID: id, SessionID: sid, Error: &cdproto.Error{Code: code, Message: msg}})
}

func (c *Client) failErr(id int64, sid target.SessionID, err error) {
	var ce *cdproto.Error
	if errors.As(err, &ce) {
		c.fail(id, sid, ce.Code, err.Error())
		return
	}
	c.fail(id, sid, -32000, err.Error())
}

var emptyObject = jsonv2.Value("{}")

func (c *Client) hasSessionOn(t *tab) bool {
	for _, s := range t.sessions {
		if s.client == c {
			return true
		}
	}
	return false
}

// handle runs one command of a lane.
func (c *Client) handle(m *cdproto.Message) {
	if strings.HasPrefix(string(m.Method), extNamespace) {
		// The extension runs a frame of this namespace as one of its own
		// operations (close any tab, open one, set a client's rules, list
		// every tab), not as a CDP command of the frame's tab: passed on
		// from a session, it skipped every check of the relay
		// (TestRedTeamExtensionOperationsAsCDP). No CDP domain is named so.
		c.fail(m.ID, m.SessionID, -32601, fmt.Sprintf("'%s' wasn't found: methods in the %s namespace are the livetab extension's own and no client's; livetab's own commands are the %s domain", m.Method, extNamespace, strings.TrimSuffix(livetabcdp.Domain, ".")))
		return
	}
	if m.SessionID == "" {
		c.noteCommand(m, 0)
	}
	if c.refuseStopped(m) || c.refusePaused(m) {
		return
	}
	if m.SessionID == "" {
		c.browserCommand(m, "")
		return
	}
	r := c.r
	r.mu.Lock()
	s := r.sessions[m.SessionID]
	var ch *child
	if s == nil {
		// Only a client with a session on the child's tab was told of
		// the child's session id; no other may use it.
		if ch = r.children[string(m.SessionID)]; ch != nil && !c.hasSessionOn(ch.tab) {
			ch = nil
		}
	}
	var tabID int64
	switch {
	case s != nil && s.tab != nil:
		tabID = s.tab.id
	case ch != nil:
		tabID = ch.tab.id
	}
	r.mu.Unlock()
	if tabID != 0 {
		c.noteCommand(m, tabID)
	}
	switch {
	case s != nil && s.client == c && s.browser:
		c.browserCommand(m, m.SessionID)
	case s != nil && s.client == c:
		c.sessionCommand(m, s)
	case ch != nil && targetLevel(m):
		c.browserCommand(m, m.SessionID)
	case ch != nil && isFetch(m.Method):
		c.fetchCommand(m, ch.tab, ch.sid, nil)
	case ch != nil:
		// A child session of an auto-attached tab, addressed by Chrome's
		// own id, as Playwright and Puppeteer do.
		c.forward(m, ch.tab, ch.sid, nil)
	default:
		c.fail(m.ID, m.SessionID, -32001, fmt.Sprintf("Session with given id not found (%s): the tab was closed or detached; attach again", m.SessionID))
	}
}

// extNamespace is the method prefix of the extension's own operations
// and events on the wire (internal/wire).
const extNamespace = "ext."

// sessionCommand handles a command on one of the client's sessions.
func (c *Client) sessionCommand(m *cdproto.Message, s *session) {
	if m.Method == cdproto.CommandRuntimeEvaluate {
		m.Params = withCommandLineAPI(m.Params)
	}
	switch {
	case m.Method == cdproto.CommandTargetSetDiscoverTargets:
		// chrome.debugger refuses it on a tab, and chromedp sends it on
		// every page: remember it and synthesize the target events.
		var p target.SetDiscoverTargetsParams
		if !c.params(m, s.id, &p) {
			return
		}
		c.r.mu.Lock()
		s.discover = p.Discover
		c.r.mu.Unlock()
		c.reply(m.ID, s.id, nil)
		return
	case m.Method == "Page.navigate" && c.refuseURL(m, s.id):
		return
	case m.Method == cdproto.CommandTargetGetTargetInfo && s.child == nil:
		// Chrome would name its own browser context; the tab is in the
		// relay's (the one Target.createTarget named).
		c.browserCommand(m, s.id)
		return
	case m.Method == "Page.setDownloadBehavior":
		c.setDownloadBehavior(m, s.id)
		return
	case isFetch(m.Method):
		sid := ""
		if s.child != nil {
			sid = s.child.sid
		}
		c.fetchCommand(m, s.tab, sid, s)
		return
	case strings.HasPrefix(string(m.Method), "Browser.") || strings.HasPrefix(string(m.Method), livetabcdp.Domain) || targetLevel(m):
		c.browserCommand(m, s.id)
		return
	case strings.HasSuffix(string(m.Method), ".disable") && (c.shared(s) || m.Method == cdproto.CommandPageDisable && c.watchedForDownloads(s)):
		// Disabling a domain on a shared attachment would silence it for
		// the other sessions too, and the relay's own Page on a popup it
		// watches for downloads.
		c.reply(m.ID, s.id, nil)
		return
	}
	sid := ""
	if s.child != nil {
		sid = s.child.sid
	}
	c.forward(m, s.tab, sid, s)
}

// targetLevel reports the commands that the relay answers even on a
// session: chrome.debugger runs them on a tab's session, where, sent raw,
// Target.createTarget opened a tab that was no client's (everyone saw it,
// it outlived its client, it skipped the extension's policy for createTab)
// and Target.closeTarget closed the person's tab.
func targetLevel(m *cdproto.Message) bool {
	return m.Method == cdproto.CommandTargetCreateTarget || m.Method == cdproto.CommandTargetCloseTarget
}

// shared reports whether another session uses the attachment of s.
func (c *Client) shared(s *session) bool {
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	if s.child != nil {
		return len(s.child.sessions) > 1 || len(s.tab.sessions) > 0
	}
	return len(s.tab.sessions) > 1
}

// watchedForDownloads reports whether s is on a tab the relay keeps Page on
// for its downloads (watchPopupDownloads).
func (c *Client) watchedForDownloads(s *session) bool {
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	return s.child == nil && c.r.keepsForDownloads(s.tab)
}

// forward sends a command to a tab (or its child session sid) and routes
// the reply back. s is the client's session, nil for a command addressed to
// a child session by Chrome's id.
func (c *Client) forward(m *cdproto.Message, t *tab, sid string, s *session) {
	r := c.r
	replySID := m.SessionID
	actx, acancel := context.WithTimeout(c.ctx, clientTimeout)
	err := r.ensureAttached(actx, t)
	acancel()
	if err != nil {
		c.failErr(m.ID, replySID, attachError(t, r.tabURL(t), err))
		return
	}
	if c.refuseUnwatched(m, t, s) || c.refuseFrame(m, t, sid) || c.refuseHistoryEntry(m, t, sid) || c.holdInitScript(m, t, sid) {
		return
	}
	// Before guardUnsafe, whose emulations run code too (a data: URL
	// loads as Page.setDocumentContent).
	if runsCode(m.Method) && !c.opened(t) {
		c.guardAttachment(t, sid)
	}
	if c.guardUnsafe(m, t, sid, s) {
		return
	}
	if sid == "" && m.Method == cdproto.CommandInspectorDisable {
		// The relay needs the crash events it brings (crash.go).
		c.reply(m.ID, replySID, nil)
		return
	}
	if c.guardCommand(m, t, sid) || c.keepOthersFrames(m, t, sid) || c.refuseOthersIDs(m, t, sid) {
		return
	}
	c.scopeGroup(m, t)
	binding, answered := c.noteBinding(m, t)
	if answered {
		return
	}
	r.mu.Lock()
	cs := &t.crash
	var ch *child
	if sid != "" {
		cs = nil
		if ch = r.children[sid]; ch != nil && ch.tab == t {
			cs = &ch.crash
		}
	}
	var crash context.Context
	crashed := false
	if cs != nil {
		crashed = cs.is && !answersWhenCrashed[m.Method]
		crash = cs.watch()
	}
	r.mu.Unlock()
	if crashed {
		if ch != nil {
			c.failErr(m.ID, replySID, frameCrashError(ch))
		} else {
			c.failErr(m.ID, replySID, crashError(t))
		}
		return
	}
	// Every command is answered within commandTimeout, and dropped at the
	// extension when its client goes away or its page crashes.
	// A command that leaves state on the page is answered whether its
	// client stays or not: the reply hook of noteState takes back what it
	// set should the client be gone by then.
	base := c.ctx
	if leavesState(string(m.Method)) {
		base = r.ctx
	}
	cctx, ccancel := context.WithCancelCause(base)
	stopCrash := func() bool { return false }
	if crash != nil {
		stopCrash = context.AfterFunc(crash, func() { ccancel(context.Cause(crash)) })
	}
	ctx, tcancel := context.WithTimeout(cctx, commandTimeout)
	cancel := func() { tcancel(); stopCrash(); ccancel(nil) }
	id := m.ID
	done := func(rep *wire.Frame, err error) {
		cancel()
		out := &cdproto.Message{ID: id, SessionID: replySID}
		refused := ""
		if s != nil {
			r.mu.Lock()
			refused = s.refused
			r.mu.Unlock()
		}
		switch {
		case refused != "":
			// The tab left the client's domains before this ran: its result
			// may be of the page the policy keeps the client from.
			out.Error = &cdproto.Error{Code: -32000, Message: "livetab policy: the session ended: " + refused}
		case err != nil:
			out.Error = &cdproto.Error{Code: -32000, Message: err.Error()}
		case rep.Error != nil:
			r.mu.Lock()
			top := t.info.URL
			r.mu.Unlock()
			out.Error = withheld(m.Method, c.stoppedError(s, r.pausedError(workerGone(frameURLRefused(t, top, rep.Error)))))
		case rep.Result == nil:
			out.Result = emptyObject
		default:
			out.Result = rep.Result
		}
		c.deliver(out)
	}
	if m.Method == cdproto.CommandRuntimeEnable && s != nil {
		// Chrome emits the contexts only for the first Runtime.enable of an
		// attachment: replay the cache to a session that enables it later.
		r.mu.Lock()
		rt := s.runtime()
		replay := rt.on
		rt.on = true
		r.mu.Unlock()
		if replay {
			next := done
			done = func(rep *wire.Frame, err error) {
				if err == nil && rep.Error == nil {
					r.mu.Lock()
					for _, ec := range rt.list {
						c.deliver(&cdproto.Message{SessionID: s.id, Method: cdproto.EventRuntimeExecutionContextCreated, Params: ec.params})
					}
					r.mu.Unlock()
				}
				next(rep, err)
			}
		}
	}
	if m.Method == cdproto.CommandTargetSetAutoAttach && autoAttachOn(m.Params) {
		next := done
		done = func(rep *wire.Frame, err error) {
			if err == nil && rep.Error == nil {
				r.mu.Lock()
				var parent *child
				if sid != "" {
					parent = r.children[sid]
				}
				if sid == "" || parent != nil {
					r.tellChildren(c, t, parent, s)
				}
				r.mu.Unlock()
			}
			next(rep, err)
		}
	}
	params, method := m.Params, m.Method
	if m.Method == cdproto.CommandRuntimeCompileScript {
		if hook := c.noteCompile(t, sid, params); hook != nil {
			next := done
			done = func(rep *wire.Frame, err error) {
				if err == nil && rep.Error == nil {
					hook(rep.Result)
				}
				next(rep, err)
			}
		}
	}
	if m.Method == cdproto.CommandRuntimeEvaluate || m.Method == cdproto.CommandRuntimeCallFunctionOn || m.Method == cdproto.CommandRuntimeRunScript {
		var bound time.Duration
		var err error
		var after func(*wire.Frame)
		switch m.Method {
		case cdproto.CommandRuntimeEvaluate:
			params, bound, err = c.boundScript(t, params)
		case cdproto.CommandRuntimeCallFunctionOn:
			method, params, bound, after, err = c.boundCall(t, sid, params)
		default:
			method, params, bound, err = c.boundRun(t, sid, params)
		}
		if err != nil {
			cancel()
			if ce, ok := err.(*cdproto.Error); ok {
				// Chrome's own answer to the kept call's step, as Chrome
				// gives it ("Could not find object with given id").
				c.fail(m.ID, replySID, ce.Code, ce.Message)
			} else if m.Method == cdproto.CommandRuntimeEvaluate {
				c.fail(m.ID, replySID, -32602, err.Error())
			} else {
				c.failErr(m.ID, replySID, err)
			}
			return
		}
		if bound > 0 {
			next := done
			sent := time.Now()
			done = func(rep *wire.Frame, err error) {
				if after != nil {
					after(rep)
				}
				// With awaitPromise Chrome answers an ended script with
				// "Internal error": that error at the bound is the bound's.
				// Any other (a navigation while a promise was awaited) is
				// Chrome's, as it came.
				// The guard's watchdog may end it first, a little before
				// the bound (guard.go): that is the bound's ending too.
				if err == nil && rep.Error != nil && (rep.Error.Message == terminatedMessage || rep.Error.Message == internalErrorMessage && (time.Since(sent) >= bound || r.guardEndedSince(t, sid, sent))) {
					ended := *rep
					ended.Error, ended.Result = nil, scriptEnded(m.Method, t, bound)
					rep = &ended
				}
				next(rep, err)
			}
		}
	}
	if m.Method == cdproto.CommandPageGetNavigationHistory {
		r.mu.Lock()
		domains := c.pol.domains
		redact := c.pol.set && len(domains) > 0 && t.creator != c
		r.mu.Unlock()
		if redact {
			next := done
			done = func(rep *wire.Frame, err error) {
				if err == nil && rep.Error == nil {
					rep.Result = redactHistory(rep.Result, domains)
				}
				next(rep, err)
			}
		}
	}
	if m.Method == cdproto.CommandDOMGetDocument && s != nil {
		var cached jsonv2.Value
		if params, done, cached = c.getDocument(s, params, done); cached != nil {
			cancel()
			c.reply(id, replySID, cached)
			return
		}
	}
	r.mu.Lock()
	if sid == "" {
		if err := t.setupRoom(string(m.Method), params); err != nil {
			r.mu.Unlock()
			cancel()
			c.fail(m.ID, replySID, -32000, err.Error())
			return
		}
		t.noteSetup(string(m.Method), params)
	}
	if hook := r.noteTrace(t, sid, s, m.Method, params); hook != nil {
		next := done
		done = func(rep *wire.Frame, err error) {
			if err == nil && rep.Error == nil {
				rep.Result = hook(rep.Result)
			}
			next(rep, err)
		}
	}
	if binding != nil {
		next := done
		done = func(rep *wire.Frame, err error) {
			if err == nil && rep.Error == nil {
				binding()
			}
			next(rep, err)
		}
	}
	if hook := c.noteOwned(m, t); hook != nil {
		next := done
		done = func(rep *wire.Frame, err error) {
			if err == nil && rep.Error == nil {
				hook(rep.Result)
			}
			next(rep, err)
		}
	}
	if hook := r.noteState(c, t, sid, string(m.Method), params); hook != nil {
		next := done
		done = func(rep *wire.Frame, err error) {
			if err == nil && rep.Error == nil {
				hook(rep.Result)
			}
			next(rep, err)
		}
	}
	r.mu.Unlock()
	c.waitDriven(ctx)
	release, err := c.window(ctx, m.Method)
	if err != nil {
		cancel()
		c.failErr(m.ID, replySID, fmt.Errorf("livetab: %s waited for this client's earlier commands at the extension (%d at once at most, fewer while other clients send too): send fewer at once, or free the page they wait on (a dialog, a paused debugger): %w", m.Method, extWindow, err))
		return
	}
	next := done
	done = func(rep *wire.Frame, err error) {
		release()
		next(rep, err)
	}
	f := &wire.Frame{Method: string(method), Params: params, TabID: t.id, SessionID: sid}
	if m.Method == cdproto.CommandPageGetFrameTree {
		c.holdsEventsUntil(replySID, m.ID)
	}
	if err := r.b.Go(ctx, f, done); err != nil {
		release()
		cancel()
		c.failErr(m.ID, replySID, err)
	}
}

// attachError explains a failed attach in terms of what the user can do.
// top is t's page URL, read under r.mu.
func attachError(t *tab, top string, err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "Another debugger"):
		return fmt.Errorf("livetab: cannot attach to tab %d: another debugger holds it; close DevTools on tab %d and retry: %w", t.id, t.id, err)
	case top != "" && (strings.Contains(msg, `Cannot access contents of url "`) && !strings.Contains(msg, `url "`+top+`"`) ||
		strings.Contains(msg, "URL of different extension") && !strings.HasPrefix(top, "chrome-extension:")):
		return fmt.Errorf("cannot attach to tab %d: %w", t.id, frameURLRefused(t, top, &cdproto.Error{Code: -32000, Message: msg}))
	case strings.Contains(msg, "Cannot access") || strings.Contains(msg, "Cannot attach"):
		return fmt.Errorf("livetab: Chrome does not let extensions debug tab %d (%s): %w", t.id, top, err)
	}
	return fmt.Errorf("livetab: attaching to tab %d: %w", t.id, err)
}

// tabURL is t's page URL.
func (r *Relay) tabURL(t *tab) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return t.info.URL
}

// fullDocument asks for every node, through shadow roots and iframes.
var fullDocument = jsonv2.Value(`{"depth":-1,"pierce":true}`)

// getDocument keeps node ids valid for every session of a shared
// attachment. Chrome has one DOM agent per attachment: a getDocument
// renumbers the nodes, and a node already sent to one session is never sent
// again to another. So on a shared attachment the relay asks for the whole
// tree, keeps it, tells the other sessions that their document changed
// (DOM.documentUpdated) and answers their next getDocument from the cache,
// which already holds every node. It returns the params to send and the
// reply handler, or a cached result to answer with.
func (c *Client) getDocument(s *session, params jsonv2.Value, done func(*wire.Frame, error)) (jsonv2.Value, func(*wire.Frame, error), jsonv2.Value) {
	r := c.r
	r.mu.Lock()
	defer r.mu.Unlock()
	doc := s.doc()
	peers := r.sessionsOn(s.tab, s.child)
	if doc.result != nil && doc.full && s.docGen != doc.gen {
		s.docGen = doc.gen
		return params, done, doc.result
	}
	full := len(peers) > 1
	if full {
		params = fullDocument
	}
	return params, func(rep *wire.Frame, err error) {
		if err == nil && rep.Error == nil {
			r.mu.Lock()
			doc.gen++
			doc.result, doc.full = rep.Result, full
			s.docGen = doc.gen
			for _, p := range r.sessionsOn(s.tab, s.child) {
				if p != s && p.docGen != 0 {
					p.client.deliver(&cdproto.Message{SessionID: p.id, Method: cdproto.EventDOMDocumentUpdated, Params: emptyObject})
				}
			}
			r.mu.Unlock()
		}
		done(rep, err)
	}, nil
}

// autoAttachOn reports whether the params of Target.setAutoAttach turn it on.
func autoAttachOn(params jsonv2.Value) bool {
	var p struct {
		AutoAttach bool `json:"autoAttach"`
	}
	return jsonv2.Unmarshal(params, &p, wire.Options) == nil && p.AutoAttach
}

// workerGone explains Chrome's bare "No SW", chrome.debugger's answer to
// a command its service worker stopped under (red team: an IO.read as the
// worker stopped).
func workerGone(e *cdproto.Error) *cdproto.Error {
	if e.Message != "No SW" {
		return e
	}
	return &cdproto.Error{Code: e.Code, Message: "livetab: the extension's service worker stopped while Chrome ran this command (No SW); it starts again on its own: send the command again"}
}
