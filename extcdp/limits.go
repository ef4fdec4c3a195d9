package extcdp

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto"
)

// What one client may cost (docs/decisions/2026-11-23-bounded-clients.md).
// A program that floods the endpoint and never reads its socket must not
// grow serve without bound, and must not slow the others down.
const (
	// commandTimeout bounds a command the extension never answers (a
	// wedged tab): the client gets an error, the relay forgets it.
	commandTimeout = 5 * time.Minute
	// defaultMaxQueue is what one endpoint client may leave unread.
	defaultMaxQueue = 64 << 20
	// defaultMaxTotalQueue is what all endpoint clients together may
	// leave unread; past it the ones with the most unread are cut first.
	defaultMaxTotalQueue = 256 << 20
	// defaultMaxInFlight is how many commands one client may have at the
	// extension at once; past it the endpoint stops reading that client's
	// socket until replies come back (TCP pushes back on the sender).
	defaultMaxInFlight = 1024
	// defaultMaxClients bounds the endpoint's connections, and with them
	// the unfinished messages (up to 1 MiB each) they may hold.
	defaultMaxClients = 128
	// messageOverhead is what a queued message costs besides its JSON.
	messageOverhead = 128
	// maxSessions is how many sessions one client may hold. Each costs the
	// relay on every event of its tab and when the client leaves, under
	// the lock every client needs: 100,000 sessions on one tab held the
	// others up for 3.4 s as their client left. Playwright and Puppeteer
	// hold one or two per tab.
	maxSessions = 4096
	// defaultMaxTabs is how many tabs one endpoint client may have open.
	// A tab costs the person's browser a renderer (tens of MB): a client
	// opening tabs in a loop would take the browser down. Playwright and
	// Puppeteer suites rarely hold more than a few dozen at once; chromedp's
	// own suite peaks near 160 (TestCancelTabDuringAttach).
	defaultMaxTabs = 300
)

// tooManyTabs refuses a createTarget to a client that has maxTabs tabs
// open or on their way. Call with r.mu held.
func (c *Client) tooManyTabs() error {
	if c.maxTabs <= 0 {
		return nil
	}
	n := c.openingTabs
	for _, t := range c.r.tabs {
		if t.creator == c && !t.closed {
			n++
		}
	}
	if n < c.maxTabs {
		return nil
	}
	return fmt.Errorf("livetab: this client has %d tabs open, the most one client may: close some (Target.closeTarget) before opening more", c.maxTabs)
}

// tooManySessions refuses a new session to a client that holds
// maxSessions. Call with r.mu held.
func (c *Client) tooManySessions() error {
	if c.sessions < maxSessions {
		return nil
	}
	return fmt.Errorf("livetab: this client holds %d sessions, the most one client may: detach from the ones it no longer uses (Target.detachFromTarget)", c.sessions)
}

// queueLimits bound a client's unread messages. nil means unbounded: the
// in-process transport is read by chromedp's own loop.
type queueLimits struct {
	max      int64         // this client's unread bytes
	total    *atomic.Int64 // every endpoint client's unread bytes
	maxTotal int64
	// overflow ends the client's connection, saying why; it runs once,
	// on its own goroutine.
	overflow func(reason string)
}

// size is what m costs while it waits in a queue.
func size(m *cdproto.Message) int64 {
	n := int64(len(m.Params) + len(m.Result) + len(m.SessionID) + len(m.Method) + messageOverhead)
	if m.Error != nil {
		n += int64(len(m.Error.Message))
	}
	return n
}
