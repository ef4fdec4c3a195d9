package extcdp

import (
	"strings"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
	"github.com/livetab/livetab/livetabcdp"
)

// The person's kill switch: the extension's popup pauses livetab. The
// extension then detaches from every tab, refuses every attach and command
// and keeps the state across worker and browser restarts; it tells the
// relay (ext.paused, and the hello).
//
// The relay keeps its clients' sessions through the pause and answers
// every command on them, and every browser-level command that needs a tab,
// with the pause error itself: a running program's next command says why
// it failed, where a detached session would only say "target detached".
// On resume those sessions end (Inspector.detached says why): the debugger
// left their pages, so what their clients enabled and the node ids they
// hold are gone, and a fresh attach is the honest way on. What needs no
// tab (listing targets, the version, closing or detaching) works
// throughout, so clients can wind down cleanly.

// setPaused records the extension's pause state; under r.mu.
func (r *Relay) setPaused(paused bool) {
	if r.paused == paused {
		return
	}
	r.paused = paused
	if paused {
		r.pauses++
	}
	r.log.Info("the person paused or resumed livetab", "paused", paused)
	for _, t := range r.tabs {
		switch {
		case paused:
			r.debuggerLeft(t)
		case len(t.sessions) > 0 && !t.attached:
			r.debuggerGone(t, "paused")
		}
	}
	ev, _ := jsonv2.Marshal(livetabcdp.PausedChangedEvent{Paused: paused}, wire.Options)
	for c := range r.clients {
		if c.livetabEvents {
			c.deliver(&cdproto.Message{Method: livetabcdp.EventPausedChanged, Params: ev})
		}
	}
}

func (r *Relay) isPaused() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.paused
}

// refusePaused answers m with the pause error when livetab is paused and m
// needs a tab; it reports whether it did.
func (c *Client) refusePaused(m *cdproto.Message) bool {
	r := c.r
	r.mu.Lock()
	paused := r.paused
	browserLevel := m.SessionID == ""
	if s := r.sessions[m.SessionID]; s != nil && s.browser {
		browserLevel = true
	}
	r.mu.Unlock()
	if !paused || browserLevel && !needsTab[m.Method] {
		return false
	}
	c.fail(m.ID, m.SessionID, -32000, wire.PausedMessage)
	return true
}

// needsTab are the browser-level methods refused while paused: they
// attach to a tab, open or show one, or act in one.
var needsTab = map[cdproto.MethodType]bool{
	cdproto.CommandTargetAttachToTarget: true,
	cdproto.CommandTargetCreateTarget:   true,
	cdproto.CommandTargetActivateTarget: true,
	livetabcdp.CommandCloseTab:          true,
}

// pausedError is the error of a command that was in the page when the
// person paused: Chrome says only "Detached while handling command", and
// the program should hear why.
func (r *Relay) pausedError(e *cdproto.Error) *cdproto.Error {
	if !r.isPaused() || strings.Contains(e.Message, wire.PausedMessage) {
		return e
	}
	return &cdproto.Error{Code: e.Code, Message: wire.PausedMessage + " (" + e.Message + ")"}
}
