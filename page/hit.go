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

// pressLandsIn checks that a press at x, y lands in the document of s:
// not on a frame owner, unless it shows s's own frame (an out-of-process
// frame is its owner to the top frame's hit test).
func (a *action) pressLandsIn(ref Ref, s *session, label string, x, y float64) error {
	n, ok, err := hit.At(a.ctx, a.top(), x, y)
	if err != nil || !ok || !n.Owner() || (!s.main && n.Frame == s.frameID) {
		return err
	}
	return &ElementError{Ref: ref, Code: "covered", Msg: fmt.Sprintf("%s is covered by the frame %s: a press there would go to that frame's page; close or dismiss it first, or pick another element", label, Defuse(n.String()))}
}

// pressLandsOn is pressLandsIn for ref's element at pt.
func (a *action) pressLandsOn(ref Ref, pt pointRes) error {
	s, _, err := a.route(ref)
	if err != nil {
		return err
	}
	return a.pressLandsIn(ref, s, pt.Label, pt.X, pt.Y)
}

// readsFrame says whether the Page reads frame fid (a snapshot reached it).
func (a *action) readsFrame(fid cdp.FrameID) bool {
	a.t.mu.Lock()
	defer a.t.mu.Unlock()
	s, ok := a.t.libs.frames[fid]
	return ok && s.navSeq == a.t.navSeq
}

// pressLandsInRead checks that a press at x, y lands in no frame the Page
// does not read: for a click at a point, which has no element.
func (a *action) pressLandsInRead(x, y float64) error {
	n, ok, err := hit.At(a.ctx, a.top(), x, y)
	if err != nil || !ok || !n.Owner() || a.readsFrame(n.Frame) {
		return err
	}
	return fmt.Errorf("%w: %.0f,%.0f is on the frame %s, which the snapshot does not read: a press there would go to that frame's page; click an element by its index instead", ErrCovered, x, y, Defuse(n.String()))
}

// keysStayIn checks that keys sent now go to the document of s, not into a
// frame its focused element shows; for no s (a key press with no
// element), into no frame the Page does not read.
func (a *action) keysStayIn(s *session) error {
	sess, frame := a.top(), cdp.FrameID("")
	if s != nil && !s.main {
		if s.execCtx != 0 {
			frame = s.frameID // an in-process frame, through the top target
		} else {
			sess = chromedp.FromContext(s.ctx).Target // its own target
		}
	}
	key := s
	if s != nil && s.main {
		key = nil
	}
	var n hit.Node
	var ok bool
	for try := 0; ; try++ {
		w, known := a.worlds[key]
		if !known {
			var err error
			if w, err = hit.World(a.ctx, sess, frame); err != nil {
				return err
			}
			if a.worlds == nil {
				a.worlds = map[*session]runtime.ExecutionContextID{}
			}
			a.worlds[key] = w
		}
		var err error
		n, ok, err = hit.FocusedFrame(a.ctx, sess, w)
		if err == nil {
			break
		}
		delete(a.worlds, key) // the frame navigated: its world went
		if !known || try > 0 {
			return err
		}
	}
	if !ok || (s == nil && a.readsFrame(n.Frame)) {
		return nil
	}
	return fmt.Errorf("%w: the keyboard focus is in the frame %s (the page moved it there): keys would go to that frame's page, so none were sent; click the element to type into first", ErrInputDiverted, Defuse(n.String()))
}
