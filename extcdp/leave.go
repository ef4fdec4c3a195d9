package extcdp

import (
	"context"
	"sync"

	"github.com/livetab/livetab/internal/wire"
)

// release lets go of everything of a client that closed: its sessions end
// (the debugger leaves tabs no one else uses) and the tabs it opened close.
// Close runs it, and so does each of the client's lanes after a command it
// handled once the client had closed: a command still on its way when the
// client left (an attach, a createTarget the extension was answering) would
// otherwise leave a session that keeps Chrome's debugging bar on the
// person's tab for good, or a tab open in the person's browser.
func (c *Client) release() {
	r := c.r
	r.mu.Lock()
	r.buryCreated(c) // while its behavior is still heard
	delete(r.clients, c)
	var touched []*tab
	for _, s := range r.sessions {
		if s.client == c {
			r.endSession(s)
			if s.tab != nil { // nil for a browser session
				touched = append(touched, s.tab)
			}
		}
	}
	for _, t := range touched {
		r.releaseIfUnused(t)
	}
	r.closeCreated(c)
	r.mu.Unlock()
	r.closeTransfers(c)
	r.touchActivity()
}

// buryCreated notes the tabs c opened, about to close, for the downloads
// their pages began just before (buryTab). Call with r.mu held.
func (r *Relay) buryCreated(c *Client) {
	for _, t := range r.tabs {
		if t.creator == c && !t.closed {
			r.buryTab(t)
		}
	}
}

// closeCreated closes the tabs c opened, once. Call with r.mu held.
func (r *Relay) closeCreated(c *Client) {
	var mine []wire.CloseTabParams
	for _, t := range r.tabs {
		if t.creator == c && !c.closing[t.id] {
			if c.closing == nil {
				c.closing = map[int64]bool{}
			}
			c.closing[t.id] = true
			// A tab the person opened from one of c's (personsPopup)
			// keeps its "Leave site?" question for the person.
			mine = append(mine, wire.CloseTabParams{TabID: t.id, Leave: !t.personsPopup()})
		}
	}
	if len(mine) == 0 || !r.addWork() {
		return
	}
	// All at once: one after the other, each quiet close (up to 500 ms)
	// left the next tab running that long.
	quiet := c.pol.holdsTabs() // as closeTarget: the unload runs as no tab's
	closed := make(chan struct{})
	c.shutting = append(c.shutting, closed)
	go func() {
		defer r.work.Done()
		defer close(closed)
		ctx, cancel := context.WithTimeout(r.ctx, clientTimeout)
		defer cancel()
		var wg sync.WaitGroup
		for _, p := range mine {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p.Quiet = quiet && p.Leave // a tab the person opened keeps its question
				r.b.Call(ctx, wire.CloseTab, 0, p)
			}()
		}
		wg.Wait()
	}()
}

// leftBehind runs after a lane handled a command: if the client closed in
// the meantime, what the command made is let go of.
func (c *Client) leftBehind() {
	if c.ctx.Err() != nil {
		c.release()
	}
}
