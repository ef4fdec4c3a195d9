package extcdp

import (
	"sync"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/target"
)

// A client's commands run in lanes, one per session (and one for the
// browser level): in order within a lane, and never waiting on another.
// An attach that takes the whole reconnect window, or a createTarget the
// extension is slow to answer, holds up only its own session; chromedp's
// single run loop (in-process) and the endpoint's read loop hand a command
// to its lane and go on at once. Chrome gives no order between sessions
// either: an iframe's session is another renderer.
type lanes struct {
	mu    sync.Mutex
	byKey map[target.SessionID]*lane
}

type lane struct {
	queue   []laneItem
	running bool
}

type laneItem struct {
	m    *cdproto.Message
	done func() // after the command went on its way, if set
}

// Handle takes one message from the client: a command at the browser level
// or on one of its sessions. The answer comes through Next. Page commands
// go to the extension as they are: their params are never decoded.
func (c *Client) Handle(m *cdproto.Message) { c.enqueue(m, nil) }

// enqueue puts m in its lane; done runs once the command went on its way
// (sent to the extension, or answered).
func (c *Client) enqueue(m *cdproto.Message, done func()) {
	if m.Method == "" {
		if done != nil {
			done()
		}
		return // clients send only commands
	}
	c.lanes.mu.Lock()
	if c.lanes.byKey == nil {
		c.lanes.byKey = map[target.SessionID]*lane{}
	}
	l := c.lanes.byKey[m.SessionID]
	if l == nil {
		l = &lane{}
		c.lanes.byKey[m.SessionID] = l
	}
	l.queue = append(l.queue, laneItem{m, done})
	start := !l.running
	l.running = true
	c.lanes.mu.Unlock()
	if start {
		go c.runLane(m.SessionID, l)
	}
}

// runLane handles a lane's commands until it is empty, then forgets it.
func (c *Client) runLane(key target.SessionID, l *lane) {
	for {
		c.lanes.mu.Lock()
		if len(l.queue) == 0 {
			l.running = false
			delete(c.lanes.byKey, key)
			c.lanes.mu.Unlock()
			return
		}
		it := l.queue[0]
		l.queue[0] = laneItem{}
		l.queue = l.queue[1:]
		c.lanes.mu.Unlock()
		c.handle(it.m)
		c.leftBehind()
		if it.done != nil {
			it.done()
		}
	}
}
