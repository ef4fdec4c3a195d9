package page

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// Defaults of the options.
const (
	DefaultViewportWidth  = 1280
	DefaultViewportHeight = 900
	DefaultMaxElements    = 250
	DefaultNavTimeout     = 30 * time.Second
	DefaultActionTimeout  = 30 * time.Second
	DefaultWaitTimeout    = 10 * time.Second
	DefaultMaxShotHeight  = 10000
	DefaultMaxChars       = 60000 // browser_read: a long article whole (docs/decisions/2026-11-25-a-read-returns-an-article-whole.md)
)

// Option configures a Page.
type Option func(*config)

type config struct {
	vw, vh        int
	maxElements   int
	navTimeout    time.Duration
	actionTimeout time.Duration
	maxShotHeight int
	dialogPolicy  DialogPolicy
	promptText    string
	tabOptions    []chromedp.ContextOption
	tabParent     context.Context
	guard         Guard
	setFiles      func(ctx context.Context, el runtime.RemoteObjectID, paths []string) error
	settleMax     time.Duration
	settleQuiet   time.Duration
	downloadDir   string
	denyDownloads bool
}

// WithViewport sets the viewport that the Page emulates in each of its tabs,
// in CSS pixels. WithViewport(0, 0) leaves the viewport of the browser alone.
// The default is 1280×900.
func WithViewport(width, height int) Option {
	return func(c *config) { c.vw, c.vh = width, height }
}

// WithMaxElements sets how many elements a snapshot lists when the call does
// not say. The default is DefaultMaxElements.
func WithMaxElements(n int) Option {
	return func(c *config) { c.maxElements = n }
}

// WithNavigationTimeout bounds how long Navigate, Back, Forward and Reload
// wait for the page to load. The default is 30 s.
func WithNavigationTimeout(d time.Duration) Option {
	return func(c *config) { c.navTimeout = d }
}

// WithActionTimeout bounds each action whose context has no earlier deadline.
// The default is 30 s.
func WithActionTimeout(d time.Duration) Option {
	return func(c *config) { c.actionTimeout = d }
}

// WithMaxScreenshotHeight caps the height of full-page screenshots, in CSS
// pixels. The default is 10000.
func WithMaxScreenshotHeight(h int) Option {
	return func(c *config) { c.maxShotHeight = h }
}

// WithDialogPolicy sets what happens when the page opens a JavaScript
// dialog. promptText is the answer to prompt() under DialogAccept.
func WithDialogPolicy(p DialogPolicy, promptText string) Option {
	return func(c *config) { c.dialogPolicy, c.promptText = p, promptText }
}

// WithTabParent sets the context that NewTab opens tabs from, with
// chromedp.NewContext(parent). It must carry the browser: a livetab allocator
// context, or a chromedp context that has run (the first tab of an
// ExecAllocator browser, say) — an ExecAllocator context alone would start a
// second browser. The default is the tab context given to New, so canceling
// that context also closes the tabs opened from it.
func WithTabParent(parent context.Context) Option {
	return func(c *config) { c.tabParent = parent }
}

// WithTabOptions adds options to the chromedp.NewContext call that opens a
// new tab, for example chromedp.WithNewWindow(false).
func WithTabOptions(opts ...chromedp.ContextOption) Option {
	return func(c *config) { c.tabOptions = append(c.tabOptions, opts...) }
}

// Page is an agent-friendly view of a browser tab: numbered snapshots of what
// can be acted on, actions by element index or CSS selector, screenshots,
// dialogs and tabs. Its methods are safe for concurrent use; actions run one
// at a time.
//
// A Page works over any chromedp tab context: a tab of chromedp's
// ExecAllocator, or a livetab tab in a person's own Chrome. It never sends
// browser-level commands other than those chromedp sends to open, attach and
// close tabs.
type Page struct {
	cfgMu sync.Mutex // guards the dialog policy of cfg
	cfg   config

	// mu serialises actions: the agent acts, then looks again.
	mu sync.Mutex

	tabsMu sync.Mutex
	tabs   []*tab
	cur    *tab
	nextID int
	closed bool
}

// New makes a Page over the tab of ctx, a context from chromedp.NewContext.
// It attaches to the tab (opening it, and starting the browser, if the
// context has not run yet) and applies the viewport emulation. Canceling ctx
// ends the Page; Close closes the tabs the Page opened itself.
func New(ctx context.Context, opts ...Option) (*Page, error) {
	if chromedp.FromContext(ctx) == nil {
		return nil, fmt.Errorf("page.New: %w; pass a context from chromedp.NewContext", chromedp.ErrInvalidContext)
	}
	p := &Page{
		cfg: config{
			vw: DefaultViewportWidth, vh: DefaultViewportHeight,
			maxElements:   DefaultMaxElements,
			navTimeout:    DefaultNavTimeout,
			actionTimeout: DefaultActionTimeout,
			maxShotHeight: DefaultMaxShotHeight,
			settleMax:     DefaultSettle,
			settleQuiet:   DefaultSettleQuiet,
		},
	}
	for _, o := range opts {
		o(&p.cfg)
	}
	if p.cfg.tabParent == nil {
		p.cfg.tabParent = ctx
	}
	t := p.newTabLocked(ctx, nil)
	if err := p.attach(t); err != nil {
		return nil, err
	}
	p.tabs = []*tab{t}
	p.cur = t
	return p, nil
}

// Close closes the tabs that the Page opened and stops the Page. The tab
// given to New stays open: its owner closes it by canceling its context.
func (p *Page) Close() error {
	p.tabsMu.Lock()
	if p.closed {
		p.tabsMu.Unlock()
		return nil
	}
	p.closed = true
	tabs := p.tabs
	p.tabs = nil
	p.tabsMu.Unlock()
	for _, t := range tabs {
		if t.stop != nil {
			t.stop()
		}
		if t.cancel != nil {
			t.cancel()
			continue
		}
		if t.ctx != nil {
			// The caller's tab stays open: free what the Page kept in it.
			ctx, cancel := context.WithTimeout(t.ctx, 2*time.Second)
			_, _ = chromedp.Call(ctx, runtime.ReleaseObjectGroup, runtime.ReleaseObjectGroupParams{ObjectGroup: objectGroup})
			cancel()
		}
	}
	return nil
}

// newTabLocked makes the state of a tab; the caller holds p.tabsMu or owns p
// alone.
func (p *Page) newTabLocked(ctx context.Context, cancel context.CancelFunc) *tab {
	t := p.unattachedTabLocked()
	t.ctx, t.cancel = ctx, cancel
	return t
}

// unattachedTabLocked makes the state of a tab the Page knows of but has no
// chromedp context for yet (a popup): its nil ctx says so.
func (p *Page) unattachedTabLocked() *tab {
	p.nextID++
	return &tab{
		p:        p,
		id:       strconv.Itoa(p.nextID),
		inflight: map[network.RequestID]struct{}{},
		notify:   make(chan struct{}),
		dialogs:  make(chan dialogJob, 8),
		refused:  map[target.ID]bool{},
		named:    map[target.ID]bool{},
	}
}

// attach runs the tab's first command, subscribes to its events, and applies
// the emulation.
func (p *Page) attach(t *tab) error {
	// The first Run binds the tab's lifetime to the context it gets, so it
	// must be the tab context itself and not a shorter action context.
	if err := chromedp.Do(t.ctx); err != nil {
		return fmt.Errorf("attaching to the tab: %w; is the browser still running?", err)
	}
	c := chromedp.FromContext(t.ctx)
	t.targetID = c.Target.TargetID
	t.main = string(t.targetID)
	t.libs.main = &session{ctx: t.ctx, main: true}
	if p.cfg.guard != nil {
		// Before the tab loads anything for an action: every document
		// request from now on waits for the guard.
		ictx, cancel := context.WithTimeout(t.ctx, 10*time.Second)
		err := t.interceptDocuments(ictx)
		cancel()
		if err != nil {
			return err
		}
	}
	// The listeners live until the Page closes or the tab ends, whichever
	// comes first: a tab the caller keeps outlives the Page.
	t.life, t.stop = context.WithCancel(t.ctx)
	if err := chromedp.Listen(t.life, t.onEvent); err != nil {
		return fmt.Errorf("listening to the tab: %w", err)
	}
	det, err := chromedp.Detached(t.ctx)
	if err != nil {
		return fmt.Errorf("watching the tab: %w", err)
	}
	go t.watch(det)
	go t.dialogLoop()
	if err := p.setDownloads(t); err != nil {
		return err
	}
	if p.cfg.vw > 0 && p.cfg.vh > 0 {
		ctx, cancel := context.WithTimeout(t.ctx, 10*time.Second)
		defer cancel()
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(p.cfg.vw), int64(p.cfg.vh))); err != nil {
			return fmt.Errorf("emulating a %dx%d viewport: %w; use WithViewport(0, 0) to keep the browser's", p.cfg.vw, p.cfg.vh, err)
		}
	}
	return nil
}

// tab is the state of one browser tab of the Page.
type tab struct {
	p        *Page
	id       string
	ctx      context.Context
	cancel   context.CancelFunc // nil when the caller owns the tab
	life     context.Context    // ends with the tab or with Page.Close
	stop     context.CancelFunc
	targetID target.ID
	main     string // frame id of the main frame (equal to the target id)

	// A tab that a page opened and the Page has not attached to yet has no
	// ctx; these say where it came from.
	pendingURL string
	opener     *tab

	mu          sync.Mutex
	notify      chan struct{} // closed and replaced on every state change
	closed      bool
	navSeq      uint64 // cross-document navigations of the main frame
	warmSeq     uint64 // navSeq+1 of the document a screenshot warmed up
	withinDoc   uint64 // same-document navigations of the main frame
	navReq      uint64 // navigations requested or started in the main frame
	loading     bool
	inflight    map[network.RequestID]struct{}
	reqSeq      uint64 // requests the tab's documents started
	netActive   time.Time
	dialog      *Dialog  // open dialog waiting for the caller
	handled     []string // dialogs the policy handled, not yet reported
	abort       func(error)
	snap        *snapState
	popups      []popupInfo // tabs this tab opened that the Page has not attached
	opens       []opened    // tabs its pages asked to open (Page.windowOpen), newest last
	openSeq     uint64
	refused     map[target.ID]bool // popups the guard refused and the Page closed
	named       map[target.ID]bool // popups a result has named
	lateBlocked []string           // URLs of refused popups a result named before their tab showed up

	dialogs chan dialogJob
	libs    libs

	url      string       // of the main frame, from its events; "" until the first
	adopted  bool         // attached with AttachTab: the person's tab
	blocked  []blockedReq // requests the guard refused, newest last
	blockSeq uint64

	downloads []*download // newest last
	dlSeq     uint64

	console  []consoleMsg // newest last
	requests []*netReq    // newest last
}

type popupInfo struct {
	id    target.ID
	url   string
	title string
}

func (t *tab) changed() {
	close(t.notify)
	t.notify = make(chan struct{})
}

// onEvent runs on chromedp's event loop of the tab: it only updates state.
func (t *tab) onEvent(ev any) {
	if ev, ok := ev.(*fetch.EventRequestPaused); ok {
		go t.paused(ev)
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.onDevtools(ev)
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		// The document of a cross-origin iframe finishes loading in the
		// frame's own target, so this session never sees it end: leave
		// subframe documents out.
		subDoc := ev.Type == network.ResourceTypeDocument && ev.FrameID != "" && string(ev.FrameID) != t.main
		if !subDoc && ev.Type != network.ResourceTypeEventSource && ev.Type != network.ResourceTypeWebSocket {
			t.inflight[ev.RequestID] = struct{}{}
		}
		t.reqSeq++
		t.netActive = time.Now()
	case *network.EventLoadingFinished:
		delete(t.inflight, ev.RequestID)
		t.netActive = time.Now()
	case *network.EventLoadingFailed:
		delete(t.inflight, ev.RequestID)
		t.netActive = time.Now()
	case *cdppage.EventFrameRequestedNavigation:
		if string(ev.FrameID) == t.main && ev.Disposition == cdppage.ClientNavigationDispositionCurrentTab {
			t.navReq++
		}
	case *cdppage.EventFrameStartedNavigating:
		if string(ev.FrameID) == t.main {
			t.navReq++
		}
	case *cdppage.EventFrameStartedLoading:
		if string(ev.FrameID) == t.main {
			t.loading = true
			t.navReq++
		}
	case *cdppage.EventFrameStoppedLoading:
		if string(ev.FrameID) == t.main {
			t.loading = false
		}
	case *cdppage.EventLoadEventFired:
		t.loading = false
	case *cdppage.EventFrameNavigated:
		if ev.Frame.ParentID == "" {
			t.url = ev.Frame.URL + ev.Frame.URLFragment
			if ev.Frame.UnreachableURL != "" {
				// An error page stands in for the page that did not load.
				t.url = ev.Frame.UnreachableURL
			}
			t.main = string(ev.Frame.ID)
			t.navSeq++
			t.libs.main.lib = ""
			clear(t.inflight)
		}
	case *cdppage.EventNavigatedWithinDocument:
		if string(ev.FrameID) == t.main {
			t.url = ev.URL
			t.withinDoc++
		}
	case *cdppage.EventJavascriptDialogOpening:
		d := Dialog{Type: string(ev.Type), Message: ev.Message, DefaultPrompt: ev.DefaultPrompt, URL: ev.URL}
		switch policy := t.p.policy(); policy {
		case DialogAsk:
			t.dialog = &d
			if t.abort != nil {
				t.abort(&DialogOpenError{Dialog: d})
			}
		default:
			// Noted now, not when answered: the action that opened the
			// dialog can finish before the answer is back.
			accept := policy == DialogAccept
			verb := map[bool]string{true: "accepted", false: "dismissed"}[accept]
			t.handled = append(t.handled, fmt.Sprintf("%s %q was %s", d.Type, Defuse(d.Message), verb))
			select {
			case t.dialogs <- dialogJob{dialog: d, accept: accept}:
			default:
			}
		}
	case *cdppage.EventJavascriptDialogClosed:
		t.dialog = nil
	case *cdppage.EventWindowOpen:
		t.openSeq++
		t.opens = append(t.opens, opened{seq: t.openSeq, url: ev.URL})
		if len(t.opens) > 16 {
			t.opens = t.opens[len(t.opens)-16:]
		}
	case *browser.EventDownloadWillBegin, *browser.EventDownloadProgress:
		t.onDownload(ev)
	case *target.EventTargetCreated:
		t.notePopup(ev.TargetInfo)
	case *target.EventTargetInfoChanged:
		t.notePopup(ev.TargetInfo)
	case *target.EventTargetDestroyed:
		for i, pp := range t.popups {
			if pp.id == ev.TargetID {
				t.popups = append(t.popups[:i], t.popups[i+1:]...)
				break
			}
		}
	default:
		return
	}
	t.changed()
}

func (t *tab) notePopup(info *target.Info) {
	if info == nil || info.Type != "page" || info.OpenerID != t.targetID || info.TargetID == t.targetID || t.refused[info.TargetID] {
		return
	}
	for i, pp := range t.popups {
		if pp.id == info.TargetID {
			t.popups[i].url, t.popups[i].title = info.URL, info.Title
			return
		}
	}
	t.popups = append(t.popups, popupInfo{id: info.TargetID, url: info.URL, title: info.Title})
}

func (t *tab) watch(det <-chan struct{}) {
	select {
	case <-det:
	case <-t.life.Done():
	}
	t.mu.Lock()
	t.closed = true
	if t.abort != nil {
		t.abort(fmt.Errorf("tab %s: %w", t.id, ErrTabClosed))
	}
	t.changed()
	t.mu.Unlock()
}

// waitState waits until cond, called with t.mu held, returns true.
func (t *tab) waitState(ctx context.Context, cond func() bool) error {
	for {
		t.mu.Lock()
		ok := cond()
		ch := t.notify
		t.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// within is a context for one command on a tab outside an action: the
// chromedp context of the tab, canceled with ctx, limited to d.
func within(tabCtx, ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	c, cancel := context.WithTimeout(tabCtx, d)
	stop := context.AfterFunc(ctx, cancel)
	return c, func() { stop(); cancel() }
}

// current returns the tab that actions go to.
func (p *Page) current() (*tab, error) {
	p.tabsMu.Lock()
	defer p.tabsMu.Unlock()
	if p.closed {
		return nil, ErrClosed
	}
	if p.cur == nil {
		return nil, fmt.Errorf("%w: no current tab; open or switch to one", ErrTabClosed)
	}
	return p.cur, nil
}

// action is one running action on a tab.
type action struct {
	t       *tab
	ctx     context.Context // bound to the tab's chromedp context
	caller  context.Context
	cancel  context.CancelCauseFunc
	dcancel context.CancelFunc
	stop    func() bool
	navSeq  uint64
	within  uint64
	navReq  uint64
	reqSeq  uint64                                  // the tab's requests before the action
	note    []string                                // facts for the result text, e.g. a navigation
	worlds  map[worldKey]runtime.ExecutionContextID // hit's isolated worlds

	watching  bool // the main document records what the action changes
	dlSeq     uint64
	downloads []Download // files the action downloaded

	blockSeq      uint64 // the tab's blocked requests before the action
	blockReported bool   // the action's error already tells of a blocked request

	limit time.Duration // the action's own time limit, or the caller's deadline when sooner

	inputAt atomic.Int64 // Unix ns when a Do's input ended (InputDone); 0: when f returned
	settles bool         // the action settles (and says what changed) after its input
	settled *string      // what SettleNow reported, when f settled the page itself

	docWatched uint64 // the navSeq of the document a navigation watched from its start (preloadLib)

	lastQuiet    *quietState // the settling's last look at the page, nil when it failed
	lastQuietSeq uint64      // the navSeq of the document it looked at
}

// begin starts an action on the current tab: it serialises actions, refuses
// to run while a dialog waits for the caller, and gives the action a context
// that carries the tab's chromedp context, the caller's cancellation and
// deadline, and an abort when a dialog opens or the tab closes.
func (p *Page) begin(ctx context.Context, dialogOK bool) (*action, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	t, err := p.current()
	if err != nil {
		p.mu.Unlock()
		return nil, err
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		p.mu.Unlock()
		return nil, fmt.Errorf("tab %s: %w; list the tabs and switch to another", t.id, ErrTabClosed)
	}
	if t.dialog != nil && !dialogOK {
		d := *t.dialog
		t.mu.Unlock()
		p.mu.Unlock()
		return nil, &DialogOpenError{Dialog: d}
	}
	actx, cancel := context.WithCancelCause(t.ctx)
	a := &action{t: t, caller: ctx, cancel: cancel, navSeq: t.navSeq, within: t.withinDoc, navReq: t.navReq, reqSeq: t.reqSeq, blockSeq: t.blockSeq}
	t.abort = func(err error) { cancel(err) }
	t.mu.Unlock()

	now := time.Now()
	dl, ok := ctx.Deadline()
	if own := now.Add(p.cfg.actionTimeout); !ok || own.Before(dl) {
		dl = own
	}
	a.limit = dl.Sub(now).Round(time.Millisecond)
	a.ctx, a.dcancel = context.WithDeadline(actx, dl)
	a.stop = context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	return a, nil
}

// end finishes the action and turns its error into one the caller can act on.
func (p *Page) end(a *action, err error) error {
	a.stop()
	cause := context.Cause(a.ctx)
	a.dcancel()
	a.cancel(nil)
	a.t.mu.Lock()
	a.t.abort = nil
	a.t.mu.Unlock()
	p.mu.Unlock()
	if err == nil {
		return nil
	}
	var de *DialogOpenError
	switch {
	case errors.As(cause, &de):
		return de
	case errors.Is(cause, ErrTabClosed):
		return cause
	case a.caller.Err() != nil:
		return fmt.Errorf("%w (%w)", a.caller.Err(), err)
	case errors.Is(err, chromedp.ErrTargetDetached):
		return fmt.Errorf("tab %s: %w: %w", a.t.id, ErrTabClosed, err)
	case errors.Is(cause, context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		var ee *ElementError
		if errors.As(err, &ee) {
			return err
		}
		if !a.t.answers() {
			return fmt.Errorf("%w after %v: %w; tab %s answers nothing, not even a one-line script: a script of its page never lets go of it, and a navigation there waits behind it too; open the page in a new tab, and close this one", ErrTimeout, a.limit, err, a.t.id)
		}
		return fmt.Errorf("%w after %v: %w; the page may be busy, try again or take a snapshot", ErrTimeout, a.limit, err)
	case contextGone(err):
		return fmt.Errorf("%w: %w; take a new snapshot", ErrNavigated, err)
	}
	return err
}

// navigated reports whether the main frame changed document since the
// action began.
func (a *action) navigated() bool {
	a.t.mu.Lock()
	defer a.t.mu.Unlock()
	return a.t.navSeq != a.navSeq
}

// commitWait bounds the wait for a requested navigation to replace the
// document: a request can end in nothing (a download, a 204, a cancelled
// navigation), and then no event says so.
const commitWait = 5 * time.Second

// settle waits for a navigation that the action started, if it started one,
// so that the next snapshot sees the new page rather than the old one.
func (a *action) settle() {
	t := a.t
	requested := func() bool {
		t.mu.Lock()
		defer t.mu.Unlock()
		return t.navReq != a.navReq
	}
	if !requested() {
		// The page reports a navigation it schedules on the same channel as
		// its answers, but the answer to an input event travels another way
		// and can overtake it. A round trip to the page lets it catch up.
		_, _ = chromedp.Call(a.ctx, runtime.Evaluate, runtime.EvaluateParams{Expression: pingJS, Silent: new(true)})
		if !requested() {
			return
		}
	}
	cctx, cancel := context.WithTimeout(a.ctx, commitWait)
	err := t.waitState(cctx, func() bool {
		return t.navSeq != a.navSeq || t.withinDoc != a.within || t.closed || t.blockedMain(a.blockSeq)
	})
	cancel()
	if err != nil {
		if a.ctx.Err() == nil {
			a.note = append(a.note, "a navigation was requested but the page has not changed yet")
		}
		return
	}
	if t.navSeq == a.navSeq && t.withinDoc == a.within && !t.closed {
		return // the guard refused it; the result says so
	}
	lctx, cancel := context.WithTimeout(a.ctx, t.p.cfg.navTimeout)
	defer cancel()
	if err := t.waitState(lctx, func() bool { return !t.loading || t.closed }); err != nil {
		a.note = append(a.note, "the page navigated and is still loading")
		return
	}
	if a.navigated() {
		a.note = append(a.note, "the page navigated")
	}
}

// answersWait is how long answers waits for the page.
const answersWait = time.Second

// answers reports whether the tab's page runs a one-line script within
// answersWait: an action that timed out on a page that does not (a
// hostile page's loop) says so, since trying again cannot help
// (testUnresponsivePage).
func (t *tab) answers() bool {
	if t.ctx == nil {
		return true
	}
	ctx, cancel := context.WithTimeout(t.ctx, answersWait)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Evaluate[int]("1"))
	return err == nil || ctx.Err() == nil
}
