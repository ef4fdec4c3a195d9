package page

import (
	"fmt"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/internal/hit"
)

// The library's checks of where a press or a key lands run in the page's
// own world, where the page can answer elementFromPoint and activeElement
// as it likes; the browser's answers below, it cannot. A page that did so
// sent the agent's click and keys into a frame of another site that it put
// over its button or moved the focus to (internal/hit). The checks here
// are about frames: within its own document a page can do what it likes
// with its own clicks anyway.

// top is the session of the tab's top frame, where input is sent.
func (a *action) top() cdp.Session { return chromedp.FromContext(a.ctx).Target }

// landing follows a point of the top frame's viewport down through the
// out-of-process frames the Page reads, each asked in its own target (the
// top frame's hit test stops at a frame of another process, and a frame
// of the agent's domains may lay one of another site over itself). It
// returns the node found at the bottom and the frame it is in (empty: the
// top frame, or a frame in its process); a frame owner there is a frame
// the Page does not read.
func (a *action) landing(x, y float64) (n hit.Node, frame cdp.FrameID, ok bool, err error) {
	sess := a.top()
	for range maxFrameDepth {
		n, ok, err = hit.At(a.ctx, sess, x, y)
		if err != nil || !ok || !n.Owner() {
			return n, frame, ok, err
		}
		fs := a.readSession(n.Frame)
		if fs == nil || fs.execCtx != 0 {
			return n, frame, ok, nil
		}
		ox, oy, err := hit.ContentOrigin(a.ctx, sess, n.Backend)
		if err != nil {
			return n, frame, ok, nil
		}
		x, y = x-ox, y-oy
		sess = chromedp.FromContext(fs.ctx).Target
		frame = n.Frame
	}
	return n, frame, ok, nil
}

// maxFrameDepth bounds landing's descent.
const maxFrameDepth = 8

// pressLandsIn checks that a press at x, y lands in the document of s:
// not in a frame the Page does not read, nor in another frame than s's.
func (a *action) pressLandsIn(ref Ref, s *session, label string, x, y float64) error {
	n, frame, ok, err := a.landing(x, y)
	if err != nil || !ok {
		return err
	}
	if !n.Owner() {
		switch {
		case frame == s.frameID && !s.main && s.execCtx == 0:
			return nil // in s's out-of-process frame
		case frame == "" && (s.main || s.execCtx != 0):
			return nil // in the top frame's process, where s is
		}
	}
	what := "the frame " + n.String()
	if !n.Owner() {
		what = "another frame's " + n.String()
	}
	return &ElementError{Ref: ref, Code: "covered", Msg: fmt.Sprintf("%s is covered by %s: a press there would go to that frame's page; close or dismiss it first, or pick another element", label, Defuse(what))}
}

// pressLandsOn is pressLandsIn for ref's element at pt.
func (a *action) pressLandsOn(ref Ref, pt pointRes) error {
	s, _, err := a.route(ref)
	if err != nil {
		return err
	}
	return a.pressLandsIn(ref, s, pt.Label, pt.X, pt.Y)
}

// readSession is the session of frame fid when the Page reads it (a
// snapshot reached it), else nil.
func (a *action) readSession(fid cdp.FrameID) *session {
	a.t.mu.Lock()
	defer a.t.mu.Unlock()
	s, ok := a.t.libs.frames[fid]
	if !ok || s.navSeq != a.t.navSeq {
		return nil
	}
	return s
}

// pressLandsInRead checks that a press at x, y lands in no frame the Page
// does not read: for a click at a point, which has no element.
func (a *action) pressLandsInRead(x, y float64) error {
	n, _, ok, err := a.landing(x, y)
	if err != nil || !ok || !n.Owner() {
		return err
	}
	return fmt.Errorf("%w: %.0f,%.0f is on the frame %s, which the snapshot does not read: a press there would go to that frame's page; click an element by its index instead", ErrCovered, x, y, Defuse(n.String()))
}

// keysStayIn checks where keys sent now go: it follows the focus from the
// top frame down through the frames it is in (the frames of another origin
// that the Page reads, each in its own isolated world), and refuses a
// frame the Page does not read. For s (typing into an element of s), the
// focus must end in s's frame: a page that moved it to itself, or to
// another frame, is refused as well. For no s (a key press with no
// element), any frame the Page reads takes the keys.
func (a *action) keysStayIn(s *session) error {
	sess, frame := a.top(), cdp.FrameID("")
	at := cdp.FrameID("") // the frame the focus is in, "" for the top one
	for range maxFrameDepth {
		n, ok, err := a.focusedFrame(sess, frame)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		fs := a.readSession(n.Frame)
		if fs == nil {
			return fmt.Errorf("%w: the keyboard focus is in the frame %s (the page moved it there): keys would go to that frame's page, so none were sent; click the element to type into first", ErrInputDiverted, Defuse(n.String()))
		}
		if fs.execCtx != 0 {
			frame = n.Frame // a frame in the top frame's process
		} else {
			sess, frame = chromedp.FromContext(fs.ctx).Target, ""
		}
		at = n.Frame
	}
	if s == nil || s.main && at == "" || !s.main && at == s.frameID {
		return nil
	}
	return fmt.Errorf("%w: the keyboard focus left the element's frame (the page moved it): keys would go elsewhere, so none were sent; click the element to type into first", ErrInputDiverted)
}

// worldKey names an isolated world: a target and a frame of it ("" for
// its top frame).
type worldKey struct {
	sess  cdp.Session
	frame cdp.FrameID
}

// focusedFrame is hit.FocusedFrame in frame of sess, through an isolated
// world the action keeps; a world the frame's navigation took is made
// again once.
func (a *action) focusedFrame(sess cdp.Session, frame cdp.FrameID) (hit.Node, bool, error) {
	key := worldKey{sess, frame}
	for try := 0; ; try++ {
		w, known := a.worlds[key]
		if !known {
			var err error
			if w, err = hit.World(a.ctx, sess, frame); err != nil {
				return hit.Node{}, false, err
			}
			if a.worlds == nil {
				a.worlds = map[worldKey]runtime.ExecutionContextID{}
			}
			a.worlds[key] = w
		}
		n, ok, err := hit.FocusedFrame(a.ctx, sess, w)
		if err == nil {
			return n, ok, nil
		}
		delete(a.worlds, key)
		if !known || try > 0 {
			return n, ok, err
		}
	}
}
