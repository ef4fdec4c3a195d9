package page

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// Kind is what an action does to a tab, as a guard sees it.
type Kind string

// The kinds of action.
const (
	// KindRead looks without changing anything: snapshots, reading,
	// screenshots, waits, scrolling.
	KindRead Kind = "read"
	// KindAct is input a person would give: clicks, typing, keys, hovering,
	// selecting, checking, dragging, answering a dialog.
	KindAct Kind = "act"
	// KindNavigate loads a page: a URL, back, forward, reload.
	KindNavigate Kind = "navigate"
	// KindEval runs JavaScript that the caller wrote.
	KindEval Kind = "eval"
	// KindUpload puts files into the page.
	KindUpload Kind = "upload"
	// KindCapture takes media out of the page.
	KindCapture Kind = "capture"
)

// Action describes one action to a [Guard] before it runs.
type Action struct {
	Kind Kind   `json:"kind"`
	Op   string `json:"op"` // what exactly: "click", "type", "navigate", "back", "snapshot", ...

	Tab      string `json:"tab"`               // the Page's id of the tab
	TargetID string `json:"targetId"`          // the browser's id of the tab
	Adopted  bool   `json:"adopted,omitempty"` // the tab came from AttachTab: the person's, not opened by the Page
	URL      string `json:"url"`               // what the tab shows now

	// Target is the URL a navigation loads (for back and forward, the
	// history entry; for reload, the current URL).
	Target string `json:"target,omitempty"`
	// Ref is the element the action works on, if any; Element describes it
	// when Ref is an index of the tab's current snapshot.
	Ref     Ref      `json:"-"`
	Element *Element `json:"element,omitempty"`
	// Text is what the action sends: the text typed, the keys pressed, the
	// values selected, the script evaluated, "accept" or "dismiss" for a
	// dialog. It may be a secret: see Sensitive.
	Text string `json:"-"`
	// Files are the local paths an upload reads.
	Files []string `json:"files,omitempty"`
}

// Sensitive reports whether Text may be a secret: typing into a password
// field, or into an element the action names by selector, which the guard
// cannot see; or pressing character keys, which go to whatever field has
// the focus. Named keys and chords (Enter, Control+A) are not.
func (a Action) Sensitive() bool {
	switch a.Op {
	case "press":
		for _, chord := range strings.Fields(a.Text) {
			parts := strings.Split(chord, "+")
			key := parts[len(parts)-1]
			mods := parts[:len(parts)-1]
			if utf8.RuneCountInString(key) == 1 && (len(mods) == 0 || len(mods) == 1 && strings.EqualFold(mods[0], "Shift")) {
				return true
			}
		}
		return false
	case "type":
	default:
		return false
	}
	if a.Element == nil {
		return true
	}
	e := a.Element
	return e.Type == "password" || isPasswordish(e.Name) || isPasswordish(e.Placeholder)
}

// Describe says in a few words what the action does, for a confirmation
// prompt or a log: `click [3] button "Buy now" on https://shop.example/cart`.
// It never includes Text.
func (a Action) Describe() string {
	var b strings.Builder
	b.WriteString(a.Op)
	switch {
	case a.Element != nil:
		fmt.Fprintf(&b, " [%d] %s", a.Element.Index, a.Element.describe())
	case a.Ref.Selector != "":
		fmt.Fprintf(&b, " %q", a.Ref.Selector)
	case a.Ref.Index > 0:
		fmt.Fprintf(&b, " [%d]", a.Ref.Index)
	}
	if a.Target != "" {
		b.WriteString(" → " + a.Target)
	}
	if a.URL != "" {
		b.WriteString(" on " + a.URL)
	}
	if len(a.Files) > 0 {
		b.WriteString(" files " + strings.Join(a.Files, ", "))
	}
	return b.String()
}

func (e *Element) describe() string {
	kind := e.Role
	if kind == "" {
		kind = e.Tag
	}
	if e.Name != "" {
		return fmt.Sprintf("%s %q", kind, truncate(e.Name, 60))
	}
	return kind
}

// Request is a document request of a tab (the main frame's or an iframe's,
// every redirect hop), which the Page holds until the guard has looked at
// it.
type Request struct {
	Tab       string `json:"tab"`
	URL       string `json:"url"`
	MainFrame bool   `json:"mainFrame"`
	// Redirect says that the request follows a redirect response.
	Redirect bool `json:"redirect,omitempty"`
	// During says that an action of the Page was running when the tab made
	// the request; false for a navigation the person started in a tab from
	// AttachTab, which the Page does not hold up.
	During bool `json:"during"`
}

// Guard decides whether the Page may do something. A Page with a guard asks
// it before every action and lets it hold every document request of its
// tabs, so that a navigation is checked on each redirect hop and not only at
// the URL the caller gave. A denial is an error that names the rule; the
// Page returns it as it is and sends nothing to the tab.
type Guard interface {
	// CheckAction is called before each action, with the caller's
	// context. It may block, for example to ask a person.
	CheckAction(ctx context.Context, a Action) error
	// CheckRequest is called for each document request; an error fails
	// the request (net::ERR_BLOCKED_BY_CLIENT) and is reported to the
	// action that caused it. It must not block for long: the page waits.
	CheckRequest(ctx context.Context, r Request) error
}

// WithGuard makes the Page ask g before every action and hold every
// document request of its tabs for g (through the Fetch domain, which also
// works through chrome.debugger).
func WithGuard(g Guard) Option {
	return func(c *config) { c.guard = g }
}

// blockedReq is a document request the guard refused.
type blockedReq struct {
	seq  uint64
	url  string
	main bool
	err  error
}

// BlockedError is the error of a navigation whose document request (the
// first or a redirect hop) the guard refused. It wraps the guard's error.
type BlockedError struct {
	URL string // the request that was blocked
	Err error  // the guard's reason
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("the request to %s was blocked: %v", e.URL, e.Err)
}

func (e *BlockedError) Unwrap() error { return e.Err }

// interceptDocuments makes the tab hold its document requests for the
// guard.
func (t *tab) interceptDocuments(ctx context.Context) error {
	// A redirect is looked at twice: its response, where a refused
	// Location is aborted before Chrome follows it, and the request of the
	// hop. Only the first keeps it from the browser's own rules, which
	// block a main-frame load of a private address that no page started
	// (pages fetched ahead, extension/lib/popups.js): blocked there, Chrome
	// would show its error page and the tab would leave the domains.
	_, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{
		URLPattern:   "*",
		ResourceType: network.ResourceTypeDocument,
		RequestStage: fetch.RequestStageRequest,
	}, {
		URLPattern:   "*",
		ResourceType: network.ResourceTypeDocument,
		RequestStage: fetch.RequestStageResponse,
	}}})
	if err != nil {
		return fmt.Errorf("holding document requests for the guard (Fetch.enable): %w", err)
	}
	return nil
}

// paused decides on a held request. It runs on its own goroutine: the
// guard may resolve a host name.
func (t *tab) paused(ev *fetch.EventRequestPaused) {
	g := t.p.cfg.guard
	t.mu.Lock()
	r := Request{
		Tab:       t.id,
		URL:       ev.Request.URL,
		MainFrame: string(ev.FrameID) == t.main || ev.FrameID == "",
		Redirect:  ev.RedirectedRequestID != "",
		During:    t.abort != nil,
	}
	adopted := t.adopted
	t.mu.Unlock()
	if ev.Request.URLFragment != "" {
		r.URL += ev.Request.URLFragment
	}
	if ev.ResponseStatusCode != 0 || ev.ResponseErrorReason != "" {
		// The response stage: only a redirect's Location is a request.
		loc := redirectLocation(ev)
		if loc == "" {
			ctx, cancel := context.WithTimeout(t.life, 10*time.Second)
			defer cancel()
			_, _ = chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
			return
		}
		r.URL, r.Redirect = loc, true
	}
	ctx, cancel := context.WithTimeout(t.life, 10*time.Second)
	defer cancel()
	var err error
	// A person's own navigation in a tab they shared is theirs to make.
	if g != nil && (r.During || !adopted) {
		err = g.CheckRequest(ctx, r)
	}
	if err == nil {
		_, _ = chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
		return
	}
	t.mu.Lock()
	t.blockSeq++
	t.blocked = append(t.blocked, blockedReq{seq: t.blockSeq, url: r.URL, main: r.MainFrame, err: err})
	if len(t.blocked) > 16 {
		t.blocked = t.blocked[len(t.blocked)-16:]
	}
	t.changed()
	t.mu.Unlock()
	reason := network.ErrorReasonBlockedByClient
	if r.MainFrame && ev.ResourceType == network.ResourceTypeDocument {
		// Aborted, a navigation leaves the tab on the page it was on.
		// Blocked, Chrome would commit an error page at the refused URL,
		// outside the domains, and the relay would take the tab from the
		// agent.
		reason = network.ErrorReasonAborted
	}
	_, _ = chromedp.Call(ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: reason})
}

// blockedMain reports whether the guard refused a main-frame request after
// seq. Call with t.mu held.
func (t *tab) blockedMain(seq uint64) bool {
	for _, b := range t.blocked {
		if b.seq > seq && b.main {
			return true
		}
	}
	return false
}

// blockedSince returns the requests blocked after seq.
func (t *tab) blockedSince(seq uint64) []blockedReq {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []blockedReq
	for _, b := range t.blocked {
		if b.seq > seq {
			out = append(out, b)
		}
	}
	return out
}

// check asks the guard about act on tab t. It runs before the action
// begins, so that a guard that asks a person does not hold the tab or eat
// into the action's timeout.
func (p *Page) check(ctx context.Context, t *tab, act Action) error {
	g := p.cfg.guard
	if g == nil {
		return nil
	}
	act.Tab, act.TargetID = t.id, string(t.targetID)
	t.mu.Lock()
	if t.closed {
		adopted := t.adopted
		t.mu.Unlock()
		return gone(t.id, adopted)
	}
	act.Adopted = t.adopted
	act.URL = t.url
	if act.Ref.Index > 0 && t.snap != nil && t.snap.navSeq == t.navSeq && act.Ref.Index <= len(t.snap.elements) {
		e := t.snap.elements[act.Ref.Index-1]
		act.Element = &e
	}
	t.mu.Unlock()
	if t.ctx != nil && act.URL == "" {
		// No navigation seen yet: the tab shows what it showed before the
		// Page attached.
		ictx, cancel := within(t.ctx, ctx, 5*time.Second)
		res, err := chromedp.Call(ictx, target.GetTargetInfo, target.GetTargetInfoParams{TargetID: t.targetID})
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, chromedp.ErrTargetDetached) {
				return gone(t.id, act.Adopted)
			}
			return fmt.Errorf("tab %s: finding out what it shows, for the guard: %w", t.id, err)
		}
		if res.TargetInfo != nil {
			act.URL = res.TargetInfo.URL
		}
	}
	if t.ctx != nil && act.Kind == KindNavigate && act.Target == "" {
		act.Target = p.historyTarget(ctx, t, act)
	}
	return g.CheckAction(ctx, act)
}

// gone is the error of an action on a tab the Page lost.
func gone(id string, adopted bool) error {
	if adopted {
		return fmt.Errorf("tab %s: %w: the browser let go of it (the person may have stopped sharing it, or closed it); list the tabs and switch to another", id, ErrTabClosed)
	}
	return fmt.Errorf("tab %s: %w; list the tabs and switch to another", id, ErrTabClosed)
}

// Do runs f as one action of the Page on the current tab, after the guard
// allowed act: the way to drive the tab with other packages (capture,
// upload) under the Page's rules. f gets a context bound to the tab's
// chromedp context, with the action's deadline, and, when act.Ref names an
// element, a Runtime object of it in the tab's main target (an element of a
// cross-origin frame that runs in its own process is refused). The object
// lives until the Page closes or the page navigates. Do returns f's text
// with what else happened on the way.
func (p *Page) Do(ctx context.Context, act Action, f func(ctx context.Context, el runtime.RemoteObjectID) (string, error)) (string, error) {
	if act.Kind == "" {
		return "", fmt.Errorf("%w: Page.Do needs the action's Kind", ErrUnsupported)
	}
	return p.run(ctx, false, act, func(a *action) (string, error) {
		var el runtime.RemoteObjectID
		if !act.Ref.IsZero() {
			var err error
			if el, err = a.elementObject(act.Ref); err != nil {
				return "", err
			}
		}
		return f(context.WithValue(a.ctx, inputKey{}, a), el)
	})
}

type inputKey struct{}

// InputDone tells the action that runs f in [Page.Do], by the context f
// got, that its input to the page ended now: the settling after f counts
// the page's quiet from here rather than from f's return, so the time f
// spent watching the page react (an upload's wait for a rejection) is not
// waited again. The requests still in flight are waited for as always.
// With any other context it does nothing.
func InputDone(ctx context.Context) {
	if a, ok := ctx.Value(inputKey{}).(*action); ok {
		a.inputAt.Store(time.Now().UnixNano())
	}
}

// SettleNow settles the page now, within the action that runs f in
// [Page.Do], rather than after f returns: f can then look at what the page
// made of its input (a file input the page cleared or marked invalid)
// without a wait of its own. The action's result says what the page waited
// for and what changed, as when it settles after f; it does not settle
// again. The input is taken to have ended now unless [InputDone] dated it.
// With any other context it does nothing.
func SettleNow(ctx context.Context) {
	a, ok := ctx.Value(inputKey{}).(*action)
	if !ok || !a.settles || a.settled != nil {
		return
	}
	msg := a.quietDown()
	a.settled = &msg
}

// elementObject hands out ref's element as a Runtime object of the tab's
// main target.
func (a *action) elementObject(ref Ref) (runtime.RemoteObjectID, error) {
	s, jsref, err := a.route(ref)
	if err != nil {
		return "", err
	}
	if s.ctx != a.t.ctx {
		return "", &ElementError{Ref: ref, Code: "unsupported", Msg: "it is in a cross-origin frame that runs in its own process; this action reaches elements of the page and its same-process frames only"}
	}
	argv, err := jsonv2.Marshal(jsref)
	if err != nil {
		return "", err
	}
	elementOf := func() (runtime.RemoteObjectID, error) {
		lib, err := a.ensureLib(s)
		if err != nil {
			return "", err
		}
		res, err := chromedp.Call(a.ctx, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
			FunctionDeclaration: elementOfJS,
			ObjectID:            lib,
			Arguments:           []*runtime.CallArgument{{Value: argv}},
			ObjectGroup:         objectGroup,
			Silent:              new(true),
		})
		if err != nil || res.ExceptionDetails != nil {
			return "", err
		}
		return res.Result.ObjectID, nil
	}
	// One round trip when the reference holds; else the library checks
	// it (loading itself again into a new document) and says why it
	// fails, and a reference it takes is tried once more.
	if id, err := elementOf(); id != "" || err != nil && !contextGone(err) {
		return id, err
	}
	var label string
	if err := a.call(s, "labelOf", &label, jsref); err != nil {
		return "", elemErr(ref, err)
	}
	if id, err := elementOf(); id != "" || err != nil {
		return id, err
	}
	return "", &ElementError{Ref: ref, Code: "stale", Msg: "the element went away"}
}

// AttachTab makes an open tab of the browser — one the person shared, say —
// a tab of the Page and the current one. The Page never closes it: CloseTab
// only lets go of it. Under a guard, navigations the person starts in it
// between the Page's actions are not held.
func (p *Page) AttachTab(ctx context.Context, targetID string) (TabInfo, error) {
	p.adoptPopups()
	p.tabsMu.Lock()
	for _, t := range p.tabs {
		if string(t.targetID) == targetID {
			p.tabsMu.Unlock()
			if err := p.SwitchTab(ctx, t.id); err != nil {
				return TabInfo{}, err
			}
			return p.tabInfo(ctx, t)
		}
	}
	p.tabsMu.Unlock()
	p.mu.Lock()
	tctx, cancel := chromedp.NewContext(p.cfg.tabParent, chromedp.WithTargetID(target.ID(targetID)), chromedp.WithDetachOnCancel())
	p.tabsMu.Lock()
	t := p.newTabLocked(tctx, cancel)
	t.adopted = true
	t.targetID = target.ID(targetID)
	p.tabsMu.Unlock()
	err := p.attachBounded(ctx, t)
	if err == nil {
		p.tabsMu.Lock()
		p.tabs = append(p.tabs, t)
		p.cur = t
		p.tabsMu.Unlock()
	}
	p.mu.Unlock()
	if err != nil {
		cancel()
		return TabInfo{}, fmt.Errorf("attaching to tab %s: %w", targetID, err)
	}
	return p.tabInfo(ctx, t)
}

// blockedNote says which requests the guard blocked during an action.
func blockedNote(bs []blockedReq) []string {
	var out []string
	for _, b := range bs {
		what := "an iframe's request"
		if b.main {
			what = "the navigation"
		}
		out = append(out, fmt.Sprintf("%s was blocked: %v; its URL:\n%s", what, b.err, wrapUntrusted(b.url)))
	}
	return out
}

// firstBlocked returns the first main-frame request in bs as an error.
func firstBlocked(bs []blockedReq) error {
	for _, b := range bs {
		if b.main {
			return &BlockedError{URL: b.url, Err: b.err}
		}
	}
	return nil
}

// historyTarget is the URL that a reload, back or forward loads; "" when
// there is none (the action then fails on its own).
func (p *Page) historyTarget(ctx context.Context, t *tab, act Action) string {
	delta := 0
	switch act.Op {
	case "reload":
		return act.URL
	case "back":
		delta = -1
	case "forward":
		delta = 1
	default:
		return ""
	}
	hctx, cancel := within(t.ctx, ctx, 5*time.Second)
	defer cancel()
	var h cdppage.GetNavigationHistoryResult
	for {
		var err error
		h, err = chromedp.Run(hctx, chromedp.NavigationEntries())
		if err == nil {
			break
		}
		// Right after an error page replaced a blocked one, the page is
		// between processes for a moment.
		if !strings.Contains(err.Error(), "Not attached to an active page") {
			return ""
		}
		select {
		case <-time.After(pollInterval):
		case <-hctx.Done():
			return ""
		}
	}
	i := int(h.CurrentIndex) + delta
	if i < 0 || i >= len(h.Entries) {
		return ""
	}
	return h.Entries[i].URL
}

// redirectLocation is where a response paused by Fetch redirects to, as an
// absolute URL; "" when it is no redirect.
func redirectLocation(ev *fetch.EventRequestPaused) string {
	switch ev.ResponseStatusCode {
	case 301, 302, 303, 307, 308:
	default:
		return ""
	}
	for _, h := range ev.ResponseHeaders {
		if !strings.EqualFold(h.Name, "Location") {
			continue
		}
		base, err := url.Parse(ev.Request.URL)
		if err != nil {
			return ""
		}
		loc, err := base.Parse(strings.TrimSpace(h.Value))
		if err != nil {
			// Chrome follows no Location it cannot parse either.
			return ""
		}
		return loc.String()
	}
	return ""
}
