package page

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/dom"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// Ref names the element an action works on: an index from the last snapshot
// of the tab, or a CSS selector (the first visible match in the main
// document).
type Ref struct {
	Index    int
	Selector string
}

// Index names the element with index i in the last snapshot.
func Index(i int) Ref { return Ref{Index: i} }

// Selector names the first visible element that matches the CSS selector in
// the main document.
func Selector(css string) Ref { return Ref{Selector: css} }

// IsZero reports whether r names nothing.
func (r Ref) IsZero() bool { return r.Index == 0 && r.Selector == "" }

func (r Ref) String() string {
	if r.Selector != "" {
		return "element " + strconv.Quote(r.Selector)
	}
	return "element [" + strconv.Itoa(r.Index) + "]"
}

// Rect is a box in CSS pixels.
type Rect struct {
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
}

// Element is one element of a snapshot that a person could act on.
type Element struct {
	Index       int      `json:"index"`                 // what actions take; valid until the next snapshot or navigation
	Tag         string   `json:"tag"`                   // lower-case tag name
	Role        string   `json:"role,omitempty"`        // ARIA role, explicit or implied by the tag
	Name        string   `json:"name,omitempty"`        // accessible name, shortened
	Value       string   `json:"value,omitempty"`       // current value of a field (a password as •••)
	Type        string   `json:"type,omitempty"`        // type attribute of an <input>
	Checked     string   `json:"checked,omitempty"`     // "true", "false" or "mixed" for checkable elements
	States      []string `json:"states,omitempty"`      // disabled, expanded, collapsed, selected, pressed, required, readonly, invalid, focused
	Href        string   `json:"href,omitempty"`        // absolute link target
	Src         string   `json:"src,omitempty"`         // media source of <img>, <video>, <audio>
	Placeholder string   `json:"placeholder,omitempty"` // placeholder, when it is not the name
	Options     []string `json:"options,omitempty"`     // first options of a <select>
	MoreOptions int      `json:"moreOptions,omitzero"`  // options of a <select> beyond Options
	Box         Rect     `json:"box"`                   // in CSS pixels of the tab's viewport
	InViewport  bool     `json:"inViewport"`            // whether any of it is in the viewport
	Frame       int      `json:"frame"`                 // 0 for the main document, else an index into Snapshot.Frames
}

// Frame is an iframe whose elements a snapshot looked into.
type Frame struct {
	Index       int    `json:"index"`
	URL         string `json:"url"`
	Name        string `json:"name,omitempty"`
	CrossOrigin bool   `json:"crossOrigin"`
	Reached     bool   `json:"reached"` // false when a cross-origin frame could not be read
	Box         Rect   `json:"box"`
}

// Snapshot is what a tab shows, for an agent: the elements it can act on,
// numbered, and a compact text of them for a model.
type Snapshot struct {
	ID         string        `json:"id"` // generation id, also in the data-livetab-ref marks
	Tab        string        `json:"tab"`
	URL        string        `json:"url"`
	Title      string        `json:"title"`
	Viewport   Rect          `json:"viewport"` // scroll position and size
	PageWidth  float64       `json:"pageWidth"`
	PageHeight float64       `json:"pageHeight"`
	Elements   []Element     `json:"elements"`
	Total      int           `json:"total"`             // interactive elements found, listed or not
	InView     int           `json:"inView"`            // of Total, in the viewport
	Above      int           `json:"above"`             // of Total, above the viewport
	Below      int           `json:"below"`             // of Total, below the viewport
	Beside     int           `json:"beside"`            // of Total, left or right of the viewport
	Frames     []Frame       `json:"frames"`            // iframes looked into
	Took       time.Duration `json:"took,format:units"` // time the snapshot took
	Text       string        `json:"-"`                 // the text form, see Snapshot's doc
	ViewOnly   bool          `json:"viewOnly"`          // taken with ViewportOnly
	Truncated  bool          `json:"truncated"`         // the cap left elements out
	Unreached  int           `json:"unreached"`         // cross-origin frames not read
	MaxListed  int           `json:"maxListed"`         // the cap used
	TextBudget int           `json:"textBudget"`        // bytes the text form may use
}

// SnapshotOptions controls a snapshot.
type SnapshotOptions struct {
	// ViewportOnly lists only elements that are at least partly in the
	// viewport.
	ViewportOnly bool
	// MaxElements caps the listed elements; those nearest the viewport are
	// kept. 0 means the Page default, a negative value no cap.
	MaxElements int
	// Text adds the visible text of the viewport, up to DefaultViewText
	// characters, so that a model can check a result without a read.
	Text bool
}

// DefaultViewText caps the viewport text a snapshot adds on request.
const DefaultViewText = 2000

// snapState is the last snapshot of a tab, which element indexes refer to.
type snapState struct {
	gen      string
	navSeq   uint64
	elements []Element
	sessions map[int]*session // frame index -> session of a cross-origin frame
	issued   int              // the highest index given out on this document, by this state or those before it
}

type jsElement struct {
	Index       int      `json:"index"`
	Tag         string   `json:"tag"`
	Role        string   `json:"role"`
	Name        string   `json:"name"`
	Value       string   `json:"value"`
	Type        string   `json:"type"`
	Checked     string   `json:"checked"`
	States      []string `json:"states"`
	Href        string   `json:"href"`
	Src         string   `json:"src"`
	Placeholder string   `json:"placeholder"`
	Options     []string `json:"options"`
	MoreOptions int      `json:"moreOptions"`
	X           float64  `json:"x"`
	Y           float64  `json:"y"`
	W           float64  `json:"w"`
	H           float64  `json:"h"`
	InView      bool     `json:"inView"`
	Frame       int      `json:"frame"`
}

type jsClip struct {
	X0 float64 `json:"x0"`
	Y0 float64 `json:"y0"`
	X1 float64 `json:"x1"`
	Y1 float64 `json:"y1"`
}

type jsFrame struct {
	Index int     `json:"index"`
	URL   string  `json:"url"`
	Name  string  `json:"name"`
	Cross bool    `json:"cross"`
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
	W     float64 `json:"w"`
	H     float64 `json:"h"`
	Clip  jsClip  `json:"clip"`
}

type jsSnap struct {
	NotReady bool        `json:"notReady"`
	Gen      string      `json:"gen"`
	URL      string      `json:"url"`
	Title    string      `json:"title"`
	VW       float64     `json:"vw"`
	VH       float64     `json:"vh"`
	SX       float64     `json:"sx"`
	SY       float64     `json:"sy"`
	DW       float64     `json:"dw"`
	DH       float64     `json:"dh"`
	Total    int         `json:"total"`
	InView   int         `json:"inView"`
	Above    int         `json:"above"`
	Below    int         `json:"below"`
	Side     int         `json:"side"`
	Elements []jsElement `json:"elements"`
	Frames   []jsFrame   `json:"frames"`
	Matched  int         `json:"matched"` // find: elements that match
	Next     int         `json:"next"`    // find: the last index given out
}

type jsSnapOpts struct {
	// Force reads a document that is loading with no body yet as it is,
	// rather than answer notReady.
	Force        bool         `json:"force,omitzero"`
	Gen          string       `json:"gen"`
	ViewportOnly bool         `json:"viewportOnly"`
	Max          int          `json:"max"`
	NameLen      int          `json:"nameLen"`
	Base         int          `json:"base"`
	FrameIndex   int          `json:"frameIndex"`
	FrameBase    int          `json:"frameBase"`
	OX           float64      `json:"ox"`
	OY           float64      `json:"oy"`
	Clip         *jsClip      `json:"clip,omitempty"`
	VW           float64      `json:"vw,omitempty"`
	VH           float64      `json:"vh,omitempty"`
	Query        *FindOptions `json:"query,omitempty"` // find
}

// textBudget is the most bytes the text form of a snapshot may take. With the
// default cap of 250 elements a line averages well under 100 bytes, so the
// budget only bites on pages with very long names.
const textBudget = 24 * 1024

func newGen() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Snapshot numbers the elements of the current tab that a person could act
// on — visible links, buttons, fields, checkable and ARIA-role elements,
// editable regions, click targets, media — including those in open shadow
// roots and iframes, marks each with a data-livetab-ref attribute, and
// returns them with a compact text form for a model.
//
// The indexes stay valid until the next snapshot of the tab or a navigation;
// an action with an older index fails with ErrStaleElement rather than act on
// whatever element took its place. When a modal dialog is open, only its
// elements are listed; elements hidden under an overlay are left out.
func (p *Page) Snapshot(ctx context.Context, opts SnapshotOptions) (*Snapshot, error) {
	var s *Snapshot
	_, err := p.run(ctx, false, Action{Kind: KindRead, Op: "snapshot"}, func(a *action) (string, error) {
		var err error
		s, err = a.snapshot(opts)
		return "", err
	})
	return s, err
}

func (a *action) snapshot(opts SnapshotOptions) (*Snapshot, error) {
	t := a.t
	start := time.Now()
	max := opts.MaxElements
	if max == 0 {
		max = t.p.cfg.maxElements
	}
	if max < 0 {
		max = 0
	}
	gen := newGen()
	a.dropStaleFrames()
	var r jsSnap
	var ready notReady
	for {
		t.mu.Lock()
		seq := t.navSeq
		t.mu.Unlock()
		r = jsSnap{}
		err := a.call(t.libs.main, "snapshot", &r, jsSnapOpts{
			Gen: gen, ViewportOnly: opts.ViewportOnly, Max: max, NameLen: 80, Force: ready.force,
		})
		if err != nil && !contextGone(err) {
			return nil, err
		}
		t.mu.Lock()
		same := seq == t.navSeq
		t.mu.Unlock()
		if err == nil && !r.NotReady && same {
			break
		}
		if err == nil && same && ready.giveUp(a) {
			continue
		}
		// The document is being replaced: look again once it is there.
		select {
		case <-time.After(pollInterval):
		case <-a.ctx.Done():
			return nil, fmt.Errorf("waiting for the page to be ready for a snapshot: %w", context.Cause(a.ctx))
		}
	}
	t.mu.Lock()
	seq := t.navSeq
	t.mu.Unlock()

	snap := &Snapshot{
		ID: gen, Tab: t.id, URL: r.URL, Title: r.Title,
		Viewport:  Rect{X: r.SX, Y: r.SY, Width: r.VW, Height: r.VH},
		PageWidth: r.DW, PageHeight: r.DH,
		Total: r.Total, InView: r.InView, Above: r.Above, Below: r.Below, Beside: r.Side,
		ViewOnly: opts.ViewportOnly, MaxListed: max, TextBudget: textBudget,
	}
	for _, e := range r.Elements {
		snap.Elements = append(snap.Elements, e.element())
	}
	state := &snapState{gen: gen, navSeq: seq, sessions: map[int]*session{}}
	for _, f := range r.Frames {
		fr := Frame{
			Index: f.Index, URL: f.URL, Name: f.Name, CrossOrigin: f.Cross, Reached: !f.Cross,
			Box: Rect{X: f.X, Y: f.Y, Width: f.W, Height: f.H},
		}
		if f.Cross {
			fr.Reached = a.snapshotFrame(snap, state, f, gen, opts, max)
			if !fr.Reached {
				snap.Unreached++
			}
		}
		snap.Frames = append(snap.Frames, fr)
	}
	listed := len(snap.Elements)
	if opts.ViewportOnly {
		snap.Truncated = max > 0 && snap.InView > listed
	} else {
		snap.Truncated = listed < snap.Total
	}
	state.elements = snap.Elements
	t.mu.Lock()
	state.issued = len(state.elements)
	if prev := t.snap; prev != nil && prev.navSeq == state.navSeq {
		if prev.issued > state.issued {
			state.issued = prev.issued
		}
	}
	t.snap = state
	t.mu.Unlock()
	snap.Took = time.Since(start)
	snap.Text = snap.render()
	if opts.Text {
		var vt string
		if err := a.call(t.libs.main, "viewText", &vt, DefaultViewText); err == nil {
			snap.Text += "\nVisible text of the viewport:\n" + wrapUntrusted(vt)
		}
	}
	return snap, nil
}

func (e jsElement) element() Element {
	return Element{
		Index: e.Index, Tag: e.Tag, Role: e.Role, Name: e.Name, Value: e.Value, Type: e.Type,
		Checked: e.Checked, States: e.States, Href: e.Href, Src: e.Src, Placeholder: e.Placeholder,
		Options: e.Options, MoreOptions: e.MoreOptions,
		Box:        Rect{X: e.X, Y: e.Y, Width: e.W, Height: e.H},
		InViewport: e.InView, Frame: e.Frame,
	}
}

// snapshotFrame adds the elements of cross-origin frame f to snap, through
// the frame's own target (an out-of-process iframe) or an isolated world of
// the frame. It reports whether it could read the frame.
func (a *action) snapshotFrame(snap *Snapshot, state *snapState, f jsFrame, gen string, opts SnapshotOptions, max int) bool {
	s, err := a.frameSession(f.Index)
	if err != nil {
		return false
	}
	remaining := 0
	if max > 0 {
		remaining = max - len(snap.Elements)
		if remaining <= 0 {
			return true
		}
	}
	var r jsSnap
	clip := f.Clip
	err = a.call(s, "snapshot", &r, jsSnapOpts{
		Gen: gen, ViewportOnly: opts.ViewportOnly, Max: remaining, NameLen: 80,
		Base: len(snap.Elements), FrameIndex: f.Index, FrameBase: f.Index * 100,
		OX: f.X, OY: f.Y, Clip: &clip, VW: snap.Viewport.Width, VH: snap.Viewport.Height,
	})
	if err != nil || r.NotReady {
		return false
	}
	for _, e := range r.Elements {
		snap.Elements = append(snap.Elements, e.element())
	}
	snap.Total += r.Total
	snap.InView += r.InView
	snap.Above += r.Above
	snap.Below += r.Below
	snap.Beside += r.Side
	state.sessions[f.Index] = s
	for _, nf := range r.Frames {
		// Frames inside the frame are read through the same session when
		// they share its origin; deeper cross-origin frames are not read.
		state.sessions[nf.Index] = s
		snap.Frames = append(snap.Frames, Frame{
			Index: nf.Index, URL: nf.URL, Name: nf.Name, CrossOrigin: nf.Cross, Reached: !nf.Cross,
			Box: Rect{X: nf.X, Y: nf.Y, Width: nf.W, Height: nf.H},
		})
		if nf.Cross {
			snap.Unreached++
		}
	}
	return true
}

// frameSession returns the session of cross-origin frame fi of the snapshot
// being taken, attaching to the frame's target or creating an isolated world
// in it.
func (a *action) frameSession(fi int) (*session, error) {
	t := a.t
	main := t.libs.main
	lib, err := a.ensureLib(main)
	if err != nil {
		return nil, err
	}
	argv, _ := jsonv2.Marshal(fi)
	res, err := chromedp.Call(a.ctx, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: frameElJS,
		ObjectID:            lib,
		Arguments:           []*runtime.CallArgument{{Value: argv}},
		ObjectGroup:         objectGroup,
		Silent:              new(true),
	})
	if err != nil {
		return nil, err
	}
	if res.ExceptionDetails != nil || res.Result.ObjectID == "" {
		return nil, fmt.Errorf("frame %d is gone", fi)
	}
	defer chromedp.Call(a.ctx, runtime.ReleaseObject, runtime.ReleaseObjectParams{ObjectID: res.Result.ObjectID}) //nolint:errcheck // best effort
	node, err := chromedp.Call(a.ctx, dom.DescribeNode, dom.DescribeNodeParams{ObjectID: res.Result.ObjectID})
	if err != nil {
		return nil, fmt.Errorf("describing frame %d: %w", fi, err)
	}
	fid := node.Node.FrameID
	if fid == "" {
		return nil, fmt.Errorf("frame %d has no document yet", fi)
	}
	t.mu.Lock()
	if s, ok := t.libs.frames[fid]; ok && s.navSeq == t.navSeq {
		s.frame = fi
		t.mu.Unlock()
		return s, nil
	}
	seq := t.navSeq
	t.mu.Unlock()

	s, err := a.attachFrameTarget(fid)
	if err != nil {
		// An in-process frame (a cross-origin but same-site iframe, or a
		// browser without site isolation) has no target of its own: read it
		// through an isolated world, which sees its DOM whatever its origin.
		w, werr := chromedp.Call(a.ctx, cdppage.CreateIsolatedWorld, cdppage.CreateIsolatedWorldParams{
			FrameID: fid, WorldName: "livetab-page",
		})
		if werr != nil {
			return nil, fmt.Errorf("reaching cross-origin frame %d: %v; %w", fi, err, werr)
		}
		s = &session{ctx: t.ctx, execCtx: w.ExecutionContextID}
	}
	s.frame, s.frameID, s.navSeq = fi, fid, seq
	t.mu.Lock()
	if t.libs.frames == nil {
		t.libs.frames = map[cdp.FrameID]*session{}
	}
	t.libs.frames[fid] = s
	t.mu.Unlock()
	return s, nil
}

// attachFrameTarget attaches to an out-of-process iframe. The context only
// detaches when it ends: closing an iframe target takes its page down.
func (a *action) attachFrameTarget(fid cdp.FrameID) (*session, error) {
	fctx, cancel := chromedp.NewContext(a.t.ctx, chromedp.WithTargetID(target.ID(fid)), chromedp.WithDetachOnCancel())
	done := make(chan error, 1)
	go func() {
		// The first Run must get fctx itself: it binds the target's life.
		done <- chromedp.Do(fctx)
	}()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	select {
	case err := <-done:
		if err != nil {
			go cancel()
			return nil, err
		}
		return &session{ctx: fctx, cancel: cancel}, nil
	case <-a.ctx.Done():
	case <-timeout.C:
	}
	go func() {
		<-done
		cancel()
	}()
	return nil, fmt.Errorf("attaching to frame %s: %w", fid, ErrTimeout)
}

// dropStaleFrames forgets the frame sessions of documents the tab has left.
func (a *action) dropStaleFrames() {
	t := a.t
	t.mu.Lock()
	defer t.mu.Unlock()
	for id, s := range t.libs.frames {
		if s.navSeq != t.navSeq {
			delete(t.libs.frames, id)
			if s.cancel != nil {
				go s.cancel()
			}
		}
	}
}

// route finds where ref lives: the session to ask (the tab's, or a
// cross-origin frame's) and the reference for the library.
func (a *action) route(ref Ref) (*session, any, error) {
	t := a.t
	if ref.Selector != "" {
		return t.libs.main, map[string]any{"css": ref.Selector}, nil
	}
	if ref.Index <= 0 {
		return nil, nil, &ElementError{Ref: ref, Code: "notfound", Msg: "no element given; pass an index from the snapshot or a CSS selector"}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.snap
	if st == nil {
		return nil, nil, &ElementError{Ref: ref, Code: "nosnapshot", Msg: "this tab has no snapshot"}
	}
	if st.navSeq != t.navSeq {
		return nil, nil, &ElementError{Ref: ref, Code: "stale", Msg: "the page navigated since the snapshot"}
	}
	if ref.Index > len(st.elements) && ref.Index <= st.issued {
		return nil, nil, &ElementError{Ref: ref, Code: "stale", Msg: fmt.Sprintf("index %d belongs to an earlier snapshot or search; the last snapshot has elements 1 to %d", ref.Index, len(st.elements))}
	}
	if ref.Index > len(st.elements) {
		// Never given out, rather than gone: say so.
		return nil, nil, &ElementError{Ref: ref, Code: "unknown", Msg: fmt.Sprintf("no element has index %d; the last snapshot and searches gave out 1 to %d", ref.Index, len(st.elements))}
	}
	jsref := map[string]any{"i": ref.Index, "g": st.gen}
	e := st.elements[ref.Index-1]
	if s, ok := st.sessions[e.Frame]; ok {
		return s, jsref, nil
	}
	return t.libs.main, jsref, nil
}

// notReadyWait is how long a snapshot or a search waits for a loading
// document to get a body before it reads the document as it is. A page
// that opens its document again (document.open()) and never closes it
// stays loading with no body for good: they waited for the caller's
// deadline, 30 s a call under livetab mcp (testSnapshotOpenDocument).
const notReadyWait = 3 * time.Second

// notReady follows one action's wait for a document that is loading with
// no body yet.
type notReady struct {
	since time.Time
	force bool
}

// giveUp reports, when the document has not been ready for notReadyWait,
// that the action reads it as it is now (force), and notes why.
func (n *notReady) giveUp(a *action) bool {
	if n.force {
		return false
	}
	if n.since.IsZero() {
		n.since = time.Now()
	}
	if time.Since(n.since) < notReadyWait {
		return false
	}
	n.force = true
	a.note = append(a.note, fmt.Sprintf("the page has been loading with no body for %v (it may have opened its document and not closed it): this is what it shows now", notReadyWait))
	return true
}
