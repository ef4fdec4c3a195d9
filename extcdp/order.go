package extcdp

import (
	"sync"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/target"
)

// On one session Chrome answers commands in order, and the events a command
// causes come after the replies to the commands sent before it. Through
// chrome.debugger a reply and an event travel separate ways to the
// extension, and an event can overtake the reply to an earlier command.
// Playwright sends Page.getFrameTree and Runtime.enable together and hears
// execution contexts only once the frame tree's reply came: a popup's
// main-world context, told in answer to the enable, that overtook the reply
// was dropped, and popup.evaluate waited forever while popup.title (in a
// world made after the reply) worked. So a session's execution-context
// events wait for the replies of the Page.getFrameTree commands sent before
// them.

// orderHolds are a client's events held until replies, per session.
type orderHolds struct {
	mu    sync.Mutex
	bySID map[target.SessionID]*orderHold
}

type orderHold struct {
	awaited map[int64]bool // the ids of the replies the events wait for
	held    []*cdproto.Message
}

// maxHeld bounds the events a session holds: past it they go at once.
const maxHeld = 1024

// holdsEventsUntil makes the execution-context events on session sid wait
// for the reply to command id, a Page.getFrameTree about to be sent.
func (c *Client) holdsEventsUntil(sid target.SessionID, id int64) {
	h := &c.holds
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.bySID == nil {
		h.bySID = map[target.SessionID]*orderHold{}
	}
	o := h.bySID[sid]
	if o == nil {
		o = &orderHold{awaited: map[int64]bool{}}
		h.bySID[sid] = o
	}
	o.awaited[id] = true
}

// heldBack reports whether m, an event, waits for a reply; it is then kept.
func (c *Client) heldBack(m *cdproto.Message) bool {
	switch m.Method {
	case cdproto.EventRuntimeExecutionContextCreated, cdproto.EventRuntimeExecutionContextDestroyed, cdproto.EventRuntimeExecutionContextsCleared:
	default:
		return false
	}
	h := &c.holds
	h.mu.Lock()
	defer h.mu.Unlock()
	o := h.bySID[m.SessionID]
	if o == nil || len(o.held) >= maxHeld {
		return false
	}
	o.held = append(o.held, m)
	return true
}

// replied lets go of the events that waited for m, a reply, once no other
// reply on its session is awaited; they go after it, in order.
func (c *Client) replied(m *cdproto.Message) []*cdproto.Message {
	h := &c.holds
	h.mu.Lock()
	defer h.mu.Unlock()
	o := h.bySID[m.SessionID]
	if o == nil || !o.awaited[m.ID] {
		return nil
	}
	delete(o.awaited, m.ID)
	if len(o.awaited) > 0 {
		return nil
	}
	delete(h.bySID, m.SessionID)
	return o.held
}
