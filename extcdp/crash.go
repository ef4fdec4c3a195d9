package extcdp

import (
	"context"
	"fmt"

	"github.com/chromedp/cdproto"
)

// When a tab's renderer dies (out of memory, a crash, the person's own
// DevTools), Chrome answers none of the commands chrome.debugger had on
// their way to the page, nor any sent after, until the page is loaded
// again (measured: Runtime.evaluate and DOM.getDocument wait forever,
// Page.reload answers in 20 ms and brings the page back). Each would hold
// its client for the relay's commandTimeout. The extension enables the
// Inspector domain on every attachment to hear Inspector.targetCrashed;
// the relay then fails the commands on their way and, until the page
// comes back, answers the page's commands itself with an error that says
// how to bring it back. Commands Chrome still answers go through.

// crashState is the crash watch of one tab. Under r.mu.
type crashState struct {
	is bool
	// ctx ends, with the crash as its cause, when the page crashes; the
	// commands on their way to the page are bound to it.
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// watch returns the context that ends when the page crashes. Call with
// r.mu held.
func (cs *crashState) watch() context.Context {
	if cs.ctx == nil {
		cs.ctx, cs.cancel = context.WithCancelCause(context.Background())
	}
	return cs.ctx
}

// crashed notes the crash and fails the commands on their way with err.
// Call with r.mu held.
func (cs *crashState) crashed(err error) {
	cs.is = true
	if cs.cancel != nil {
		cs.cancel(err)
	}
	cs.ctx, cs.cancel = nil, nil
}

// crashError is what a command of a crashed page gets.
func crashError(t *tab) error {
	return fmt.Errorf("livetab: the page of tab %d crashed (its renderer is gone); bring it back with Page.reload or Page.navigate, or close it", t.id)
}

// pageCrashed runs for the tab's Inspector.targetCrashed. Call with r.mu
// held.
func (r *Relay) pageCrashed(t *tab) {
	r.log.Warn("page crashed", "tab", t.id)
	t.crash.crashed(crashError(t))
	t.runtime.list = nil
	t.doc = docCache{}
}

// pageBack runs for an event that says the tab's page lives again. Call
// with r.mu held.
func (t *tab) pageBack() { t.crash.is = false }

// frameCrashError is what a command of a crashed out-of-process frame gets.
func frameCrashError(c *child) error {
	return fmt.Errorf("livetab: the frame %s of tab %d crashed (its renderer is gone); reload its page (Page.reload on the tab) to bring it back", c.targetID, c.tab.id)
}

// frameCrashed runs for an out-of-process frame's Inspector.targetCrashed:
// its session's commands fail as a page's do (TestCrashedFrameAnswers).
// A reload of the page makes the frame anew, with a session of its own.
// Call with r.mu held.
func (r *Relay) frameCrashed(c *child) {
	r.log.Warn("frame crashed", "tab", c.tab.id, "frame", c.targetID)
	c.crash.crashed(frameCrashError(c))
	c.runtime.list = nil
	c.doc = docCache{}
}

// answersWhenCrashed are the commands Chrome answers for a tab whose page
// crashed: those the browser handles, not the renderer.
var answersWhenCrashed = map[cdproto.MethodType]bool{
	cdproto.CommandPageReload:          true,
	cdproto.CommandPageNavigate:        true,
	cdproto.CommandPageStopLoading:     true,
	cdproto.CommandPageClose:           true,
	cdproto.CommandInspectorEnable:     true,
	cdproto.CommandInspectorDisable:    true,
	cdproto.CommandTargetGetTargetInfo: true,
}
