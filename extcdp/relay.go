package extcdp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"

	"github.com/livetab/livetab/bridge"
	"github.com/livetab/livetab/internal/wire"
)

// Relay is the one browser-level CDP emulation over a bridge. It keeps the
// user's tabs, the debugger attachments (one per tab, shared by every
// session on it), the sessions it minted and the clients that speak CDP to
// it. Both doors use it: the in-process chromedp Transport of [NewAllocator]
// and the WebSocket endpoint of [Handler] are each a [Client].
type Relay struct {
	b   *bridge.Bridge
	log *slog.Logger
	// fair shares the extension among the clients (fair.go).
	fair fairness

	browserID target.ID
	contextID cdp.BrowserContextID

	mu       sync.Mutex
	tabs     map[int64]*tab
	byTarget map[target.ID]*tab
	sessions map[target.SessionID]*session
	children map[string]*child // by Chrome's child session id
	clients  map[*Client]struct{}

	downloads downloadState
	fifos     chan struct{} // the FIFO watches running (fileload.go)
	// behaviorsSet counts the download behaviors clients set (downloadBehavior.set).
	behaviorsSet int64
	transfers    transfers

	// ctx ends with Close; work is the background work it bounds.
	ctx         context.Context
	cancel      context.CancelFunc
	workMu      sync.Mutex
	work        sync.WaitGroup
	workClosed  bool
	unsubscribe func()
	closed      bool // under mu

	// paused: the person paused livetab in the popup (pause.go); under mu.
	paused bool
	// pauses counts the pauses, so that an attach can tell one came and
	// went while it was on its way (ensureAttached); under mu.
	pauses int

	// act: the actions the popup shows (person.go); clientSeq numbers
	// the clients, under mu.
	act       activity
	clientSeq int64

	// owed: undoings of what clients that left set on tabs, which no
	// extension took; sent once one is back (sendOwed). Under mu.
	owed []*wire.Frame
	// lostCreates counts the createTargets whose extension went away
	// before it answered: their tab may be open, no client's (under mu).
	lostCreates int

	// shared: opened by NewAllocator's one-line path, closed by the last
	// of its users (under openMu).
	shared bool
	users  int
}

// RelayOptions configure a [Relay]. The zero value is ready to use.
type RelayOptions struct {
	// Logger receives attachments, detaches and what the relay refused.
	// Default: nothing is logged.
	Logger *slog.Logger
}

// ErrRelayOpen is NewRelay's error on a bridge that has an open relay.
var ErrRelayOpen = errors.New("extcdp: the bridge already has an open relay: use that one (extcdp.NewAllocator finds it), or Close it first")

// ErrRelayClosed is the error of an allocator or endpoint whose relay was
// closed.
var ErrRelayClosed = errors.New("extcdp: the relay is closed; open a new one with extcdp.NewRelay")

// open holds the open relay of each bridge, so that the one-line path,
// [NewAllocator] on a bridge, finds it. Close removes a relay.
var (
	openMu sync.Mutex
	open   = map[*bridge.Bridge]*Relay{}
)

// NewRelay starts the relay of b. A bridge has one open relay at a time,
// since a relay owns the debugger attachments of the extension behind it:
// NewRelay fails with [ErrRelayOpen] while b has one. Close the relay when
// done with it; closing the bridge does not.
func NewRelay(b *bridge.Bridge, opts RelayOptions) (*Relay, error) {
	openMu.Lock()
	defer openMu.Unlock()
	if open[b] != nil {
		return nil, ErrRelayOpen
	}
	r := newRelay(b, opts)
	open[b] = r
	return r, nil
}

func newRelay(b *bridge.Bridge, opts RelayOptions) *Relay {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Relay{
		b:         b,
		log:       opts.Logger,
		browserID: target.ID(randomID()),
		contextID: cdp.BrowserContextID(randomID()),
		tabs:      map[int64]*tab{},
		byTarget:  map[target.ID]*tab{},
		sessions:  map[target.SessionID]*session{},
		children:  map[string]*child{},
		clients:   map[*Client]struct{}{},
		fifos:     make(chan struct{}, maxFIFOWatches),
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.unsubscribe = b.Subscribe(r.onFrame)
	return r
}

// useRelay returns b's open relay for one more user, opening one when b
// has none; done gives the use back, and the last use of a relay that
// useRelay opened closes it.
func useRelay(b *bridge.Bridge) (r *Relay, done func()) {
	openMu.Lock()
	r = open[b]
	if r == nil {
		r = newRelay(b, RelayOptions{})
		r.shared = true
		open[b] = r
	}
	r.users++
	openMu.Unlock()
	var once sync.Once
	return r, func() {
		once.Do(func() {
			openMu.Lock()
			r.users--
			last := r.shared && r.users == 0
			if last && open[b] == r {
				// Out of the registry under the same lock, so that no
				// NewAllocator picks up the relay while it closes.
				delete(open, b)
			}
			openMu.Unlock()
			if last {
				r.Close()
			}
		})
	}
}

// closeGrace bounds how long Close waits for what its clients leave behind
// (the tabs they opened closing) before it cuts that work short.
const closeGrace = 5 * time.Second

// Close ends the relay: every client is closed as if it had disconnected
// (its sessions end, the debugger leaves the tabs, the tabs it opened
// close), pending commands fail, the endpoint's connections end with "the
// relay closed" and new ones get 503, and the relay stops listening to the
// bridge. The bridge and the person's tabs stay as they are. Close returns
// within a few seconds even when the extension does not answer, and a
// second Close does nothing.
func (r *Relay) Close() error {
	openMu.Lock()
	if open[r.b] == r {
		delete(open, r.b)
	}
	openMu.Unlock()
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	clients := make([]*Client, 0, len(r.clients))
	for c := range r.clients {
		clients = append(clients, c)
	}
	r.mu.Unlock()
	for _, c := range clients {
		c.Close()
	}
	r.workMu.Lock()
	r.workClosed = true
	r.workMu.Unlock()
	done := make(chan struct{})
	go func() {
		r.work.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(closeGrace):
		r.cancel()
		<-done
	}
	r.cancel()
	r.unsubscribe()
	r.closeTransfers(nil)
	return nil
}

// isClosed reports whether Close ran.
func (r *Relay) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// goWork runs fn in the background with a context that ends after timeout
// or when the relay closes; Close waits for it. After Close it does not
// run fn.
func (r *Relay) goWork(timeout time.Duration, fn func(ctx context.Context)) {
	if !r.addWork() {
		return
	}
	go func() {
		defer r.work.Done()
		ctx, cancel := context.WithTimeout(r.ctx, timeout)
		defer cancel()
		fn(ctx)
	}()
}

// addWork counts one piece of work that Close waits for (call r.work.Done
// when it ends); it reports false once Close began, when none may start.
func (r *Relay) addWork() bool {
	r.workMu.Lock()
	defer r.workMu.Unlock()
	if r.workClosed {
		return false
	}
	r.work.Add(1)
	return true
}

// Bridge returns the relay's bridge.
func (r *Relay) Bridge() *bridge.Bridge { return r.b }

func randomID() string {
	var b [16]byte
	rand.Read(b[:])
	return strings.ToUpper(hex.EncodeToString(b[:]))
}

// tab is one tab of the user's browser.
type tab struct {
	id       int64
	targetID target.ID
	info     wire.TabInfo

	// creator is the client whose createTarget opened the tab; nil for a
	// tab the user opened. Only livetab's own tabs are ever closed by a
	// cancel
	// (docs/decisions/2026-11-22-cancel-closes-only-tabs-livetab-opened.md).
	creator *Client
	created bool
	// kept: its creator gave it to the person (Livetab.keepTab), so no
	// client owns it again, nor closes it on cancel.
	kept bool
	// context is the browser context a client made it in (see
	// createBrowserContext); "" for the default one.
	context cdp.BrowserContextID
	// announced: clients were told of the tab (targetCreated), or it was
	// there when the relay listed the tabs.
	announced bool
	// crash: whether its page crashed, and what ends with a crash
	// (crash.go).
	crash crashState
	// closed: a client closed it; it stays listed until the extension
	// says it is gone, but counts no longer against its creator's tabs.
	closed bool
	// unguarded: the extension was told that no client with a policy
	// drives the page that opened this popup (clientpolicy.go).
	unguarded bool
	// keptFor: the extension was told that only these policy owners'
	// clients drive the page that opened this popup (clientpolicy.go).
	keptFor []string
	// downloadWatch: the relay keeps the debugger on this popup of a
	// client's tab, with Page on, so that it hears of the popup's
	// downloads (watchPopupDownloads).
	downloadWatch bool
	// watchGen counts the watches begun on the tab, so that a watch cut
	// short undoes nothing of a later one (watchPopupDownloads).
	watchGen int
	// behind: the tab was not the active one of its window when the
	// relay first heard of it: a tab the person opened from a link with
	// Ctrl or the middle button. Chrome opens a page's popups in front.
	behind bool
	// trace: who traces the tab, and its trace streams (tracing.go).
	trace traceState
	// owned: whose the objects and streams clients got on it are
	// (owned.go).
	owned ownedIDs
	// bindings: the clients that added each binding name (bindings.go).
	bindings map[string]map[*Client]bool

	attachMu sync.Mutex // serializes ext.attach/detach of this tab
	attached bool       // the extension's debugger is attached

	sessions []*session // sessions on the tab itself
	// fetch is the client that intercepts the attachment's requests
	// (fetch.go).
	fetch *Client
	// left is what each client set on the page (leftstate.go).
	left    leftState
	runtime execContexts
	doc     docCache
	// setup: the commands that set up the attachment, for a reattach
	// (reattach.go).
	setup    []setupCmd
	setupSeq int
	// replaying: the setup is being sent again after a reattach.
	replaying bool
	// aborted: the main frame started a navigation that ends the debugger's
	// session (reattach.go).
	aborted *abortedNav
	// navRequest is the request of the main frame's document that a
	// client held to domains may not follow outside them (navigatingTo):
	// its id and URL, to read a redirect's Location by.
	navRequest [2]string
	// guard ends a script left behind that holds the page (guard.go).
	guard guardState
}

// child is a flat child session of a tab, made by the tab's auto-attach: a
// cross-origin iframe (or a worker) of the page.
type child struct {
	sid      string
	tab      *tab
	targetID target.ID
	info     target.Info
	sessions []*session // relay sessions bound to this target (WithTargetID)
	fetch    *Client    // who intercepts its requests (fetch.go)
	left     leftState  // what each client set on it (leftstate.go)
	runtime  execContexts
	doc      docCache
	crash    crashState // its renderer's (crash.go)
	// guard is its own (guard.go): with it on, the clients that enabled
	// Debugger on it alone hear Debugger's events.
	guard guardState
	// told are the sessions that heard it attached, toldVia the clients
	// that heard it on its parent frame's session (tellChildren).
	told    map[target.SessionID]bool
	toldVia map[*Client]bool
	// pageOn: the relay turned Page on here to hear of its downloads
	// (watchFrameDownloads).
	pageOn bool
}

// docCache keeps the last DOM.getDocument answer of an attachment. The DOM
// agent, and so its node ids, is shared by every session on the tab, and a
// getDocument renumbers the nodes. See Client.getDocument.
type docCache struct {
	result jsonv2.Value
	gen    int  // 0: no valid document
	full   bool // the whole tree, pierced: enough for a session that joins late
}

// session is a CDP session the relay minted for a client.
type session struct {
	id     target.SessionID
	client *Client
	tab    *tab
	child  *child // set for a session on an iframe target
	// browser marks a session from Target.attachToBrowserTarget: its
	// commands go to the browser level.
	browser  bool
	discover bool
	// docGen is the generation of the attachment's document whose node
	// ids this session holds; 0 for none.
	docGen int
	// stopped: the person stopped its tab or its client; its commands
	// fail with this (person.go). Off its tab's list, it holds nothing.
	stopped string
	// refused: the client's policy ended it, the tab having left its
	// domains; replies still on their way fail with this (frames.go).
	refused string
	// watched: the relay has turned Page on for this session's tab and
	// read where the tab is, for a client with domains (frames.go).
	watched bool
	// via is the session whose Target.attachToTarget made this one, ""
	// for the root: Chrome tells of the attach and the detach there.
	via target.SessionID
}

func (s *session) targetID() target.ID {
	switch {
	case s.child != nil:
		return s.child.targetID
	case s.tab != nil:
		return s.tab.targetID
	}
	return ""
}

func (s *session) runtime() *execContexts {
	if s.child != nil {
		return &s.child.runtime
	}
	return &s.tab.runtime
}

// sessionsOn lists the sessions that share an attachment: the tab's own,
// or those of one child. Call with r.mu held.
func (r *Relay) sessionsOn(t *tab, c *child) []*session {
	if c != nil {
		return c.sessions
	}
	return t.sessions
}

func (s *session) doc() *docCache {
	if s.child != nil {
		return &s.child.doc
	}
	return &s.tab.doc
}

// execContexts caches the live execution contexts of one attachment. A
// second Runtime.enable on a shared attachment makes Chrome emit nothing, so
// the relay replays these to each session that enables Runtime late.
type execContexts struct {
	on   bool
	list []execContext
}

type execContext struct {
	id     int64
	unique string
	params jsonv2.Value
}

func (e *execContexts) created(params jsonv2.Value) {
	var p struct {
		Context struct {
			ID       int64  `json:"id"`
			UniqueID string `json:"uniqueId"`
		} `json:"context"`
	}
	if jsonv2.Unmarshal(params, &p, wire.Options) == nil {
		e.list = append(e.list, execContext{p.Context.ID, p.Context.UniqueID, params})
	}
}

func (e *execContexts) destroyed(params jsonv2.Value) {
	var p struct {
		ID       int64  `json:"executionContextId"`
		UniqueID string `json:"executionContextUniqueId"`
	}
	if jsonv2.Unmarshal(params, &p, wire.Options) != nil {
		return
	}
	for i, c := range e.list {
		if (p.UniqueID != "" && c.unique == p.UniqueID) || (p.UniqueID == "" && c.id == p.ID) {
			e.list = append(e.list[:i], e.list[i+1:]...)
			return
		}
	}
}

func (e *execContexts) reset() { e.on, e.list = false, nil }

// targetInfo describes t the way Chrome would, with the default browser
// context id that Playwright requires.
func (r *Relay) targetInfo(t *tab) *target.Info {
	info := &target.Info{
		TargetID:         t.targetID,
		Type:             "page",
		Title:            t.info.Title,
		URL:              t.info.URL,
		Attached:         t.attached,
		BrowserContextID: r.contextID,
	}
	if t.context != "" {
		info.BrowserContextID = t.context
	}
	if o := r.tabs[t.info.OpenerTabID]; t.info.OpenerTabID != 0 && o != nil {
		info.OpenerID = o.targetID
	}
	return info
}

func (r *Relay) childInfo(c *child) *target.Info {
	info := c.info
	info.Attached = true
	info.BrowserContextID = r.contextID
	if c.tab.context != "" {
		info.BrowserContextID = c.tab.context
	}
	if info.ParentID == "" {
		info.ParentID = c.tab.targetID
	}
	return &info
}

// upsertTab records what the extension said of a tab. Call with r.mu held.
func (r *Relay) upsertTab(ti wire.TabInfo) *tab {
	t := r.tabs[ti.TabID]
	if t == nil {
		t = &tab{id: ti.TabID, behind: !ti.Active}
		r.tabs[ti.TabID] = t
	}
	if ti.TargetID != "" && target.ID(ti.TargetID) != t.targetID {
		if t.targetID != "" {
			delete(r.byTarget, t.targetID)
		}
		t.targetID = target.ID(ti.TargetID)
		r.byTarget[t.targetID] = t
	}
	if ti.TargetID == "" {
		ti.TargetID = string(t.targetID)
	}
	t.info = ti
	r.inherit(t)
	r.watchPopupDownloads(t)
	return t
}

// refreshTabs asks the extension for every tab and forgets the ones that
// are gone, as if the extension had reported their removal.
func (r *Relay) refreshTabs(ctx context.Context) error {
	res, err := r.b.Call(ctx, wire.Targets, 0, nil)
	if err != nil {
		return err
	}
	var tr wire.TargetsResult
	if err := jsonv2.Unmarshal(res, &tr, wire.Options); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[int64]bool{}
	// A tab the extension opened and never reported to a createTarget
	// (it went away first) is no client's: left to itself every client
	// would list it as the person's, and it would stay open. With no
	// createTarget on its way, an opened tab that no client claimed and
	// no client was told of is one of those.
	orphans := r.lostCreates > 0 && !r.opening()
	var stray []int64
	for _, ti := range tr.Targets {
		seen[ti.TabID] = true
		before := r.listers(r.tabs[ti.TabID])
		if old := r.tabs[ti.TabID]; orphans && ti.Created && (old == nil || old.creator == nil && !old.announced && !old.kept) {
			stray = append(stray, ti.TabID)
			continue
		}
		if t := r.upsertTab(ti); t.targetID != "" {
			// As a tab update: the tab may have left a client's domains
			// since its last report, and mainNavigated takes a URL the
			// relay already has for one it has acted on.
			r.enforcePolicies(t)
			switch {
			case t.announced:
				r.relist(t, before) // shared or unshared since its last report
			case !ti.Created:
				// A tab the person opened that the relay hears of first
				// here: its ext.tabCreated came while no bridge listened
				// (a stopped worker), or is on its way. Announced as that
				// would have, or a client discovering targets never heard
				// of it (red team).
				r.announce(t)
			}
			t.announced = true
		}
	}
	for id, t := range r.tabs {
		if !seen[id] {
			r.tabGone(t, "target_closed")
		}
	}
	if orphans {
		r.lostCreates = 0
	}
	if len(stray) > 0 {
		r.log.Info("closing tabs opened for a client the extension never told", "tabs", stray)
		r.goWork(clientTimeout, func(ctx context.Context) {
			for _, id := range stray {
				r.b.Call(ctx, wire.CloseTab, 0, wire.TabParams{TabID: id})
			}
		})
	}
	return nil
}

// opening reports whether a createTarget is on its way. Call with r.mu
// held.
func (r *Relay) opening() bool {
	for c := range r.clients {
		if c.openingTabs > 0 {
			return true
		}
	}
	return false
}

// onFrame handles an event of the extension. It runs on the bridge's reader
// goroutine, so it never waits on the extension.
func (r *Relay) onFrame(f *wire.Frame) {
	if f.Method == "" {
		return // not an event: a client would take it for a reply
	}
	if !f.IsExt() && f.Method != bridge.Disconnected {
		r.onCDPEvent(f)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch f.Method {
	case wire.TabCreated, wire.TabUpdated:
		var ti wire.TabInfo
		if jsonv2.Unmarshal(f.Params, &ti, wire.Options) != nil {
			return
		}
		before := r.listers(r.tabs[ti.TabID])
		t := r.upsertTab(ti)
		if t.targetID == "" {
			return
		}
		r.enforcePolicies(t)
		r.checkPopup(t)
		switch {
		case t.announced:
			r.relist(t, before)
			r.broadcastTarget("Target.targetInfoChanged", t)
		case ti.Created && t.creator == nil:
			// createTarget's reply path announces it, once it knows the
			// client and browser context the tab belongs to: the other
			// clients must never hear of it.
		default:
			t.announced = true
			r.announce(t)
		}
	case wire.TabRemoved:
		var p wire.TabParams
		if jsonv2.Unmarshal(f.Params, &p, wire.Options) != nil {
			return
		}
		if t := r.tabs[p.TabID]; t != nil {
			r.tabGone(t, "target_closed")
		}
	case wire.Detached:
		var p wire.DetachedParams
		if jsonv2.Unmarshal(f.Params, &p, wire.Options) != nil {
			return
		}
		if t := r.tabs[p.TabID]; t != nil {
			if p.Reason == wire.ReasonStopped {
				r.stopTab(t)
			} else {
				r.debuggerGone(t, p.Reason)
			}
		}
	case wire.StopClient:
		var p wire.StopClientParams
		if jsonv2.Unmarshal(f.Params, &p, wire.Options) == nil {
			if c := r.clientByID(p.Client); c != nil {
				r.stopClient(c)
			}
		}
	case wire.Reattached:
		var p wire.TabParams
		if jsonv2.Unmarshal(f.Params, &p, wire.Options) != nil {
			return
		}
		if t := r.tabs[p.TabID]; t != nil {
			r.debuggerReattached(t)
		}
	case wire.FileLoad:
		var p wire.FileLoadParams
		if jsonv2.Unmarshal(f.Params, &p, wire.Options) == nil {
			r.onFileLoad(p.URL)
		}
	case wire.Download:
		var d wire.DownloadInfo
		if jsonv2.Unmarshal(f.Params, &d, wire.Options) == nil {
			r.onExtDownload(d)
		}
	case wire.Paused:
		var p wire.PausedParams
		if jsonv2.Unmarshal(f.Params, &p, wire.Options) == nil {
			r.setPaused(p.Paused)
		}
	case wire.Hello:
		var h wire.HelloParams
		jsonv2.Unmarshal(f.Params, &h, wire.Options)
		r.setPaused(h.Paused)
		r.reconcile(h.Attached)
		r.touchActivity()
	}
}

// reconcile runs when an extension (re)connects: the debugger survives a
// service-worker restart, so tabs it still holds carry on; sessions on tabs
// it lost end; attachments nobody uses any more are let go.
func (r *Relay) reconcile(attached []int64) {
	still := map[int64]bool{}
	for _, id := range attached {
		still[id] = true
	}
	for _, t := range r.tabs {
		if t.attached && !still[t.id] {
			r.debuggerGone(t, "extension_restarted")
			// Watched again when refreshTabs lists it.
			t.downloadWatch = false
		}
	}
	for id := range still {
		t := r.tabs[id]
		// A popup the relay watches for its downloads has no session
		// and stays: letting go of it lost the watch after every stop
		// of the service worker (TestRedTeamPopupsLaterDownloadsHeedTheBehavior).
		if t == nil || len(t.sessions) == 0 && !r.hasChildSessions(t) && !r.keepsForDownloads(t) {
			if t != nil {
				r.guardOff(t)
				t.attached = false
				t.setup = nil
				t.left, t.fetch = nil, nil
			}
			r.b.GoNow(&wire.Frame{Method: wire.Detach, Params: tabParams(id)}, func(*wire.Frame, error) {})
		} else {
			t.attached = true
		}
	}
	r.payOwed()
	r.pushPolicies()
	r.goWork(clientTimeout, func(ctx context.Context) { r.refreshTabs(ctx) })
}

func (r *Relay) hasChildSessions(t *tab) bool {
	for _, c := range r.children {
		if c.tab == t && len(c.sessions) > 0 {
			return true
		}
	}
	return false
}

func tabParams(id int64) jsonv2.Value {
	p, _ := jsonv2.Marshal(wire.TabParams{TabID: id}, wire.Options)
	return p
}

// onCDPEvent routes an event of a tab or of one of its child sessions.
func (r *Relay) onCDPEvent(f *wire.Frame) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.tabs[f.TabID]
	if t == nil {
		return
	}
	var c *child
	if f.SessionID != "" {
		if c = r.children[f.SessionID]; c == nil {
			return
		}
	}
	method := cdproto.MethodType(f.Method)
	var attached *child // a child this event tells of
	rt, doc := &t.runtime, &t.doc
	if c != nil {
		rt, doc = &c.runtime, &c.doc
	}
	switch method {
	case cdproto.EventInspectorTargetCrashed:
		if c == nil {
			r.pageCrashed(t)
		} else {
			r.frameCrashed(c)
		}
	case cdproto.EventInspectorTargetReloadedAfterCrash:
		if c == nil {
			t.pageBack()
		} else {
			c.crash.is = false
		}
	case cdproto.EventPageFrameNavigated:
		if c == nil {
			t.pageBack()
			r.mainNavigated(t, f.Params)
		}
	case cdproto.EventPageLifecycleEvent:
		if c == nil {
			defer r.loadSeenAgain(t, f.Params)
		}
	case cdproto.EventPageFrameStartedNavigating, cdproto.EventPageFrameRequestedNavigation, eventPageFrameScheduledNavigation, cdproto.EventNetworkRequestWillBeSent:
		if c == nil && method == cdproto.EventPageFrameStartedNavigating {
			r.navStarted(t, f.Params)
		}
		if c == nil && r.watchesLeaving(t) {
			if u := mainNavURL(t, method, f.Params); u != "" {
				r.navigatingTo(t, u)
			}
		}
	case cdproto.EventNetworkResponseReceivedExtraInfo:
		// A redirect's Location can come before the request it starts.
		if c == nil && r.watchesLeaving(t) {
			if u := redirectURL(t, f.Params); u != "" {
				r.navigatingTo(t, u)
			}
		}
	case cdproto.EventDOMDocumentUpdated:
		doc.result = nil
		for _, s := range r.sessionsOn(t, c) {
			s.docGen = 0
		}
	case cdproto.EventRuntimeExecutionContextCreated:
		rt.created(f.Params)
	case cdproto.EventRuntimeExecutionContextDestroyed:
		rt.destroyed(f.Params)
	case cdproto.EventRuntimeExecutionContextsCleared:
		rt.list = nil
	case cdproto.EventTargetAttachedToTarget:
		var p struct {
			SessionID          string      `json:"sessionId"`
			TargetInfo         target.Info `json:"targetInfo"`
			WaitingForDebugger bool        `json:"waitingForDebugger"`
		}
		if jsonv2.Unmarshal(f.Params, &p, wire.Options) == nil && p.SessionID != "" {
			if p.WaitingForDebugger && t.creator == nil {
				r.runHeldFrame(t, p.SessionID)
			}
			if p.TargetInfo.ParentID == "" {
				if c != nil {
					p.TargetInfo.ParentID = c.targetID
				} else {
					p.TargetInfo.ParentID = t.targetID
				}
			}
			ch := &child{sid: p.SessionID, tab: t, targetID: p.TargetInfo.TargetID, info: p.TargetInfo}
			r.children[p.SessionID] = ch
			attached = ch
			r.watchFrameDownloads(t, ch)
		}
	case eventPageDownloadWillBegin, eventPageDownloadProgress:
		// A frame of another site, in a process of its own, tells of its
		// downloads on its own session: they are the tab's all the same.
		r.onPageDownload(t, method, f.Params)
	case cdproto.EventTargetDetachedFromTarget:
		var p struct {
			SessionID string `json:"sessionId"`
		}
		if jsonv2.Unmarshal(f.Params, &p, wire.Options) == nil {
			if gone := r.children[p.SessionID]; gone != nil {
				r.childGone(gone)
			}
		}
	}
	if c == nil && strings.HasPrefix(string(method), "Tracing.") {
		r.onTracingEvent(t, method, f.Params)
		return
	}
	holder := t.fetch
	if c != nil {
		holder = c.fetch
	}
	if holder != nil {
		sid := ""
		if c != nil {
			sid = c.sid
		}
		r.boundHeldRequest(t, sid, method, f.Params)
	}
	popup := popupURL(method, f.Params)
	objects := eventObjectIDs(t, f.Params)
	holders := bindingHolders(t, method, f.Params)
	heldFrom := func(x *Client) bool { return holders != nil && !holders[x] }
	if c == nil {
		restored := bfcacheRestored(method, f.Params)
		toAll := r.onGuardEvent(t, "", method)
		for _, s := range t.sessions {
			if !fetchTo(method, holder, s.client) || !toAll && !t.guard.users[s.client] || s.client.hidesPopup(t, popup) || heldFrom(s.client) {
				continue
			}
			s.client.deliver(&cdproto.Message{SessionID: s.id, Method: method, Params: f.Params})
			t.owned.noteAll(objects, s.client)
			if attached != nil {
				attached.toldTo(s)
			}
			for _, ev := range restored {
				s.client.deliver(&cdproto.Message{SessionID: s.id, Method: cdproto.EventPageLifecycleEvent, Params: ev})
			}
		}
		return
	}
	// A child's events go to the sessions bound to its target, and, under
	// the child's own session id, to every client on its tab: that is what
	// Chrome's flat auto-attach does for Playwright and Puppeteer. A client
	// held to domains hears nothing of a frame outside them (frames.go).
	noteFrameURL(c, method, f.Params)
	guarded := !r.onGuardEvent(t, c.sid, method)
	for _, s := range c.sessions {
		if guarded && !c.guard.users[s.client] {
			continue
		}
		if fetchTo(method, holder, s.client) && s.client.hearsFrame(c, method) && !s.client.hidesPopup(t, popup) && !heldFrom(s.client) {
			s.client.deliver(&cdproto.Message{SessionID: s.id, Method: method, Params: f.Params})
			t.owned.noteAll(objects, s.client)
			if attached != nil {
				attached.toldTo(s)
			}
		}
	}
	var done []*Client
	for _, s := range t.sessions {
		if guarded && !c.guard.users[s.client] {
			continue
		}
		if !containsClient(done, s.client) && fetchTo(method, holder, s.client) && s.client.hearsFrame(c, method) && !s.client.hidesPopup(t, popup) && !heldFrom(s.client) {
			done = append(done, s.client)
			s.client.deliver(&cdproto.Message{SessionID: target.SessionID(c.sid), Method: method, Params: f.Params})
			t.owned.noteAll(objects, s.client)
			if attached != nil {
				attached.toldToClient(s.client)
			}
		}
	}
}

func containsClient(list []*Client, c *Client) bool {
	for _, x := range list {
		if x == c {
			return true
		}
	}
	return false
}

// announce tells the clients about a new tab: targetCreated to those that
// discover targets, and an attachedToTarget to those that auto-attach.
// Call with r.mu held.
func (r *Relay) announce(t *tab) {
	r.broadcastTarget("Target.targetCreated", t)
	r.autoAttach(t)
}

// autoAttach announces t as attached to every client that auto-attaches
// and has no session on it yet. Call with r.mu held.
func (r *Relay) autoAttach(t *tab) {
	info := r.targetInfo(t)
	for c := range r.clients {
		r.autoAttachFor(c, t, info)
	}
}

// autoAttachFor announces t as attached to c when c auto-attaches, may
// use t and has no session on it yet. Call with r.mu held.
func (r *Relay) autoAttachFor(c *Client, t *tab, info *target.Info) {
	if c.autoAttach && attachable(t.info.URL) && c.lists(t) && !c.hasSessionOn(t) && c.refusal(t) == "" {
		r.attachedEvent(c, r.newSession(c, t, nil), info, "")
	}
}

// broadcastTarget sends a target event about t to the browser level of
// every client that discovers targets and lists t, and to every page
// session of those that asked for them (chromedp's WaitNewTarget listens
// there). Call with r.mu held.
func (r *Relay) broadcastTarget(method cdproto.MethodType, t *tab) {
	r.targetEvent(method, t, func(c *Client) bool { return c.lists(t) })
}

// targetEvent sends a target event about t as broadcastTarget does, to the
// clients to takes. Call with r.mu held.
func (r *Relay) targetEvent(method cdproto.MethodType, t *tab, to func(*Client) bool) {
	var params, attached jsonv2.Value
	if method == "Target.targetDestroyed" {
		params, _ = jsonv2.Marshal(map[string]target.ID{"targetId": t.targetID}, wire.Options)
		attached = params
	} else {
		info := r.targetInfo(t)
		params, _ = jsonv2.Marshal(map[string]*target.Info{"targetInfo": info}, wire.Options)
		attached = params
		if !info.Attached {
			// For a client with a session on the tab it is attached:
			// Puppeteer drops a targetInfoChanged that says otherwise of
			// a target it attached to, and a page it knows no URL of yet
			// then never becomes one it waits for.
			info.Attached = true
			attached, _ = jsonv2.Marshal(map[string]*target.Info{"targetInfo": info}, wire.Options)
		}
	}
	paramsFor := func(c *Client) jsonv2.Value {
		if c.hasSessionOn(t) {
			return attached
		}
		return params
	}
	for c := range r.clients {
		if c.discover && to(c) {
			c.deliver(&cdproto.Message{Method: method, Params: paramsFor(c)})
		}
	}
	for _, s := range r.sessions {
		if s.discover && to(s.client) {
			s.client.deliver(&cdproto.Message{SessionID: s.id, Method: method, Params: paramsFor(s.client)})
		}
	}
}

// attachable reports whether chrome.debugger may attach to a tab at url.
func attachable(url string) bool {
	for _, p := range []string{"chrome://", "chrome-extension://", "devtools://", "edge://", "chrome-untrusted://", "https://chromewebstore.google.com", "https://chrome.google.com/webstore"} {
		if strings.HasPrefix(url, p) {
			return false
		}
	}
	return true
}

// newSession mints a session of c on t (or on its child). Call with r.mu held.
func (r *Relay) newSession(c *Client, t *tab, ch *child) *session {
	s := &session{id: target.SessionID(randomID()), client: c, tab: t, child: ch}
	r.sessions[s.id] = s
	c.sessions++
	if ch != nil {
		ch.sessions = append(ch.sessions, s)
	} else {
		t.sessions = append(t.sessions, s)
	}
	c.hidden.Show(t.targetID)
	r.touchActivity()
	r.syncTab(t, c)
	return s
}

// attachedEvent tells c of s on the session that asked for it, as
// Chrome does: Playwright's newCDPSession attaches through a session of
// Target.attachToBrowserTarget, and the same event on the root session read
// as a second page of the same target ("Duplicate target", which threw in
// Playwright's event loop and ended the client's process).
func (r *Relay) attachedEvent(c *Client, s *session, info *target.Info, on target.SessionID) {
	attached := *info
	attached.Attached = true // by this very session
	info = &attached
	params, _ := jsonv2.Marshal(struct {
		SessionID          target.SessionID `json:"sessionId"`
		TargetInfo         *target.Info     `json:"targetInfo"`
		WaitingForDebugger bool             `json:"waitingForDebugger"`
	}{s.id, info, false}, wire.Options)
	c.deliver(&cdproto.Message{SessionID: on, Method: cdproto.EventTargetAttachedToTarget, Params: params})
}

// endSession forgets s and tells its client, at the browser level, that it
// is detached: chromedp ends the target's pending calls on that event, and
// Playwright and Puppeteer wait for it after closeTarget. Call with r.mu held.
func (r *Relay) endSession(s *session) {
	if r.sessions[s.id] != s {
		return
	}
	delete(r.sessions, s.id)
	r.touchActivity()
	s.client.sessions--
	if s.child != nil {
		s.child.sessions = removeSession(s.child.sessions, s)
	} else if s.tab != nil {
		s.tab.sessions = removeSession(s.tab.sessions, s)
	}
	if s.tab != nil {
		r.leftTab(s.tab, s.client)
	}
	r.syncTab(s.tab, s.client)
	r.unwatchDownloads() // the session may have been what asked for the watch
	params, _ := jsonv2.Marshal(map[string]string{"sessionId": string(s.id), "targetId": string(s.targetID())}, wire.Options)
	// On the session it was attached through, as Chrome does: on the
	// root, Playwright took the end of its newCDPSession for the page's
	// own end, and closed the page (TestClientsCompat).
	s.client.deliver(&cdproto.Message{SessionID: s.via, Method: cdproto.EventTargetDetachedFromTarget, Params: params})
}

func removeSession(list []*session, s *session) []*session {
	for i, x := range list {
		if x == s {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}

// releaseIfUnused detaches the debugger from t when no session needs it, so
// that the user's tab loses the infobar. Call with r.mu held.
func (r *Relay) releaseIfUnused(t *tab) {
	if len(t.sessions) > 0 || r.hasChildSessions(t) || !t.attached || r.keepsForDownloads(t) {
		return
	}
	t.attached = false
	t.setup = nil
	t.left, t.fetch = nil, nil
	t.runtime.reset()
	t.doc = docCache{}
	var frames []string // guarded: a last look there too
	for _, c := range r.children {
		if c.tab == t {
			if c.guard.on {
				frames = append(frames, c.sid)
			}
			c.stopGuard()
			delete(r.children, c.sid)
		}
	}
	// Under r.mu: never wait for an extension that is away. One that
	// comes back is told to let go of unused tabs by reconcile.
	detach := func() {
		r.b.GoNow(&wire.Frame{Method: wire.Detach, Params: tabParams(t.id)}, func(*wire.Frame, error) {})
	}
	if t.guard.on || len(frames) > 0 {
		r.lastLook(t, frames, detach)
		return
	}
	detach()
}

// debuggerGone ends every session of t after the extension's debugger left
// it (the tab navigated to a page it may not debug, the user pressed Cancel
// on the infobar, DevTools took over). Call with r.mu held.
func (r *Relay) debuggerGone(t *tab, reason string) {
	r.log.Info("debugger detached", "tab", t.id, "reason", reason)
	r.debuggerLeft(t)
	why, _ := jsonv2.Marshal(map[string]string{"reason": detachReason(t, reason)}, wire.Options)
	for _, s := range append([]*session(nil), t.sessions...) {
		// Chrome says why before it detaches; listeners of the session see it.
		s.client.deliver(&cdproto.Message{SessionID: s.id, Method: cdproto.EventInspectorDetached, Params: why})
		r.endSession(s)
	}
}

// detachReason turns chrome.debugger's detach reason into what the user
// can do about it.
func detachReason(t *tab, reason string) string {
	switch reason {
	case "canceled_by_user":
		return "canceled_by_user: the person pressed Cancel on Chrome's debugging bar, which detaches livetab from every tab; attach again to continue"
	case "replaced_with_devtools":
		return fmt.Sprintf("replaced_with_devtools: DevTools was opened on tab %d; close DevTools on tab %d and attach again", t.id, t.id)
	case "target_closed":
		return fmt.Sprintf("target_closed: tab %d was closed or went to a page extensions may not debug", t.id)
	case "paused":
		return "paused: the person paused livetab in its popup, which let go of every tab; they resumed, so attach again"
	case "policy":
		return fmt.Sprintf("policy: tab %d left what the livetab policy allows (not shared, or outside the allowed domains)", t.id)
	}
	return reason
}

// debuggerLeft forgets what the debugger's attachment to t held: its
// execution contexts, its document and its child targets. Call with r.mu
// held.
func (r *Relay) debuggerLeft(t *tab) {
	r.guardOff(t)
	t.attached = false
	t.setup = nil
	t.left, t.fetch = nil, nil
	t.runtime.reset()
	t.doc = docCache{}
	for _, c := range r.children {
		if c.tab == t {
			r.childGone(c)
		}
	}
}

func (r *Relay) childGone(c *child) {
	c.stopGuard()
	delete(r.children, c.sid)
	for _, s := range append([]*session(nil), c.sessions...) {
		r.endSession(s)
	}
}

// tabGone forgets a closed tab. Call with r.mu held.
func (r *Relay) tabGone(t *tab, reason string) {
	r.buryTab(t)
	r.debuggerGone(t, reason)
	delete(r.tabs, t.id)
	if r.byTarget[t.targetID] == t {
		delete(r.byTarget, t.targetID)
	}
	if t.targetID != "" {
		r.broadcastTarget("Target.targetDestroyed", t)
	}
}

// ensureAttached attaches the extension's debugger to t unless it is. It is
// called on the first command for a tab, so merely listing tabs never shows
// the user an infobar.
func (r *Relay) ensureAttached(ctx context.Context, t *tab) error {
	t.attachMu.Lock()
	defer t.attachMu.Unlock()
	r.mu.Lock()
	ok := t.attached
	pauses := r.pauses
	r.mu.Unlock()
	if ok {
		return nil
	}
	if _, err := r.b.Call(ctx, wire.Attach, 0, wire.TabParams{TabID: t.id}); err != nil {
		return err
	}
	r.mu.Lock()
	if r.paused || r.pauses != pauses {
		// The person paused while the attach was on its way: the pause
		// let go of the tabs it knew, and this attach may have landed
		// after it, or its reply after setPaused. Let go of it too
		// rather than hold a tab through the pause, or believe one held
		// that the pause let go of.
		r.mu.Unlock()
		r.b.GoNow(&wire.Frame{Method: wire.Detach, Params: tabParams(t.id)}, func(*wire.Frame, error) {})
		return &cdproto.Error{Code: -32000, Message: wire.PausedMessage}
	}
	t.attached = true
	r.mu.Unlock()
	r.log.Info("debugger attached", "tab", t.id)
	return nil
}

// clientTimeout bounds the relay's own calls to the extension on behalf of
// a client (attach, create a tab, list tabs).
const clientTimeout = 30 * time.Second
