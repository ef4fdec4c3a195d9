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

// relayWindow bounds the commands of all clients at the extension
// together: the window was per client, and one program that opened 24
// connections (the endpoint serves 128) had 384 commands there at once;
// another client's p50 evaluate went from 2-6 ms to 0.9-7 s, some got no
// answer in 10 s, and twice Chrome stopped the extension's worker (red
// team, 6 of 6). Past relayWindow only a client that has none there and
// few in flight may send one; a slot that frees goes to a waiting client
// with the fewest there. So a flood over many connections has relayWindow
// commands at the extension, not extWindow each, and a client that sends
// a command now and then waits behind those alone. A client alone there
// has its whole window, extWindow.
const relayWindow = 8

// unblockExtra is how many commands of unblocking a client may have at the
// extension beyond its share.
const unblockExtra = 2

// unblocking are the commands that let a page's waiting commands finish:
// they do not wait for the client's share, or a client whose share is
// taken by commands on a paused page, an open dialog or a held request
// could not send the one that frees them. They have a share of their own,
// unblockExtra: with none, a flood of them (Page.stopLoading,
// Debugger.resume, Runtime.terminateExecution on the client's own tab)
// put 1024 commands at the extension, and another client's p50 evaluate
// went from 3 ms to 400 ms (red team, 3 of 3 each).
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

// fairness counts each client's commands at the extension, and the
// clients waiting to send more.
type fairness struct {
	mu      sync.Mutex
	at      map[*Client]int
	total   int
	waiting map[*Client]int
	wake    chan struct{} // closed and made anew when a slot frees
}

// mayGo says whether c may put one more command at the extension: its own
// window has room, no other waiting client has fewer commands there, and
// the relay's window has room, or c has none there and few in flight, or
// c is alone. extra is the room it has
// beyond both windows (unblocking commands). Call with f.mu held.
func (f *fairness) mayGo(c *Client, extra int) bool {
	n := f.at[c]
	if n >= extWindow+extra {
		return false
	}
	alone := f.total == n
	for w := range f.waiting {
		if w != c {
			alone = false
			if f.at[w] < n {
				return false
			}
		}
	}
	// A client alone at the extension has its whole window, and one with
	// nothing there and few commands in flight may always send one:
	// commands of others that wait on their pages (a wedged flood of
	// promises) must not hold it back, nor may many connections' floods,
	// whose commands wait in their lanes.
	return alone || n == 0 && c.inFlight.Load() <= extWindow || f.total < relayWindow+extra
}

// window takes a slot for a command of c at the extension, waiting while
// the client has its share there; release gives it back.
func (c *Client) window(ctx context.Context, method cdproto.MethodType) (release func(), err error) {
	f := &c.r.fair
	extra := 0
	if unblocking[method] {
		extra = unblockExtra
	}
	f.mu.Lock()
	if f.at == nil {
		f.at, f.waiting = map[*Client]int{}, map[*Client]int{}
		f.wake = make(chan struct{})
	}
	for !f.mayGo(c, extra) {
		f.waiting[c]++
		wake := f.wake
		f.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			f.mu.Lock()
			f.unwait(c)
			f.mu.Unlock()
			return nil, context.Cause(ctx)
		}
		f.mu.Lock()
		f.unwait(c)
	}
	f.at[c]++
	f.total++
	f.mu.Unlock()
	free := sync.OnceFunc(func() { f.free(c) })
	t := time.AfterFunc(slowCommand, free)
	return func() { t.Stop(); free() }, nil
}

// unwait counts one waiter of c less. Call with f.mu held.
func (f *fairness) unwait(c *Client) {
	if f.waiting[c]--; f.waiting[c] <= 0 {
		delete(f.waiting, c)
	}
}

func (f *fairness) free(c *Client) {
	f.mu.Lock()
	f.total--
	if f.at[c]--; f.at[c] <= 0 {
		delete(f.at, c)
	}
	close(f.wake)
	f.wake = make(chan struct{})
	f.mu.Unlock()
}
