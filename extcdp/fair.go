package extcdp

import (
	"context"
	"sync"
	"time"

	"github.com/chromedp/cdproto"
)

// The extension answers commands first come first served, through one
// worker and one socket: a client that kept its 1024 commands in flight
// there put every other client's commands behind them (the red team
// measured another client's p50 evaluate going from ~1.6 ms to ~90 ms).
// So a client has at most extWindow commands at the extension; the rest
// wait in their lane, each client's in its own, and another client's
// command goes on its way at once, behind at most extWindow of the
// flooder's: measured, 1.8 ms alone and 4.4 ms under the flood with 16,
// up to 51 ms with 64. Clients send bursts of 10 to 25 commands at most
// (Playwright on a new page), so 16 costs them next to nothing.
const extWindow = 16

// slowCommand is when a command gives its slot back unanswered: one that
// long is waiting on the page (a promise, a paused debugger, a dialog),
// not queued work, and a client with more waits than the window (a
// waitForSelector in each of 20 tabs) must still send the click that
// ends them.
var slowCommand = 250 * time.Millisecond

// unblocking are the commands that let a page's waiting commands finish:
// they never wait for the window, or a client whose window is full of
// commands on a paused page, an open dialog or a held request could not
// send the one that frees them.
var unblocking = map[cdproto.MethodType]bool{
	cdproto.CommandDebuggerResume:                 true,
	cdproto.CommandDebuggerStepOver:               true,
	cdproto.CommandDebuggerStepInto:               true,
	cdproto.CommandDebuggerStepOut:                true,
	cdproto.CommandDebuggerDisable:                true,
	cdproto.CommandPageHandleJavaScriptDialog:     true,
	cdproto.CommandRuntimeRunIfWaitingForDebugger: true,
	cdproto.CommandFetchContinueRequest:           true,
	cdproto.CommandFetchFulfillRequest:            true,
	cdproto.CommandFetchFailRequest:               true,
	cdproto.CommandFetchContinueWithAuth:          true,
	cdproto.CommandFetchContinueResponse:          true,
	cdproto.CommandFetchDisable:                   true,
	cdproto.CommandPageStopLoading:                true,
	cdproto.CommandRuntimeTerminateExecution:      true,
}

// window takes a slot for a command of c at the extension, waiting while
// the client has extWindow there; release gives it back.
func (c *Client) window(ctx context.Context, method cdproto.MethodType) (release func(), err error) {
	if unblocking[method] {
		return func() {}, nil
	}
	select {
	case c.atExt <- struct{}{}:
		free := sync.OnceFunc(func() { <-c.atExt })
		t := time.AfterFunc(slowCommand, free)
		return func() { t.Stop(); free() }, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}
