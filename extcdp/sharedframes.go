package extcdp

import (
	"slices"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"

	"github.com/livetab/livetab/internal/wire"
)

// Frames' sessions on a shared tab. Chrome has one attachment per tab, so
// its frames' sessions (auto-attach) are every client's there at once: A
// turning auto-attach off, or detaching a frame's session by its id, ended
// the frame session B was driving, and B was told it was gone (red team,
// 5 of 5). So while another client, or the relay's own watch, still uses
// them, these commands act on the sender alone.

// keepOthersFrames answers c's Target.setAutoAttach off, or
// Target.detachFromTarget of a frame's session, on the attachment sid of t
// when others still use its frames, and reports whether it did.
func (c *Client) keepOthersFrames(m *cdproto.Message, t *tab, sid string) bool {
	r := c.r
	switch m.Method {
	case cdproto.CommandTargetSetAutoAttach:
		if autoAttachOn(m.Params) {
			return false
		}
		r.mu.Lock()
		kept := r.autoAttachKept(c, t, sid)
		if kept != nil {
			// Chrome holds the setting c sent last, maybe waiting for a
			// debugger: the one that stays is what others set.
			r.dropState(c, t, sid, string(cdproto.CommandTargetSetAutoAttach))
			r.sendOwed(&wire.Frame{Method: string(cdproto.CommandTargetSetAutoAttach), Params: kept, TabID: t.id, SessionID: sid})
		}
		r.mu.Unlock()
		if kept == nil {
			return false
		}
	case cdproto.CommandTargetDetachFromTarget:
		var p struct {
			SessionID string    `json:"sessionId"`
			TargetID  target.ID `json:"targetId"`
		}
		if jsonv2.Unmarshal(m.Params, &p, wire.Options) != nil {
			return false
		}
		r.mu.Lock()
		var ch *child
		for _, x := range r.children {
			if x.tab == t && (p.SessionID != "" && x.sid == p.SessionID || p.SessionID == "" && p.TargetID != "" && x.targetID == p.TargetID) {
				ch = x
				break
			}
		}
		others := ch != nil && r.othersUseFrames(c, t)
		var params jsonv2.Value
		if others {
			params, _ = jsonv2.Marshal(map[string]any{"sessionId": ch.sid, "targetId": ch.targetID}, wire.Options)
		}
		r.mu.Unlock()
		if !others {
			return false
		}
		// As Chrome tells the session that detached it; the frame's
		// session stays for the others.
		c.deliver(&cdproto.Message{SessionID: m.SessionID, Method: cdproto.EventTargetDetachedFromTarget, Params: params})
	default:
		return false
	}
	c.reply(m.ID, m.SessionID, nil)
	return true
}

// autoAttachKept is the auto-attach that stays on the attachment sid of t
// when c turns its own off: another client's, or the relay's watch of the
// frames' downloads; nil for none. Call with r.mu held.
func (r *Relay) autoAttachKept(c *Client, t *tab, sid string) jsonv2.Value {
	if ls := r.leftStateOf(t, sid); ls != nil {
		for o, cs := range *ls {
			if p, ok := cs.params[string(cdproto.CommandTargetSetAutoAttach)]; o != c && ok && autoAttachOn(p) {
				return p
			}
		}
	}
	if r.watchesFrames(t, sid) {
		return jsonv2.Value(watchAutoAttach)
	}
	return nil
}

// othersUseFrames reports whether a client other than c has a session on
// t or on one of its frames, or the relay watches t's frames. Call with
// r.mu held.
func (r *Relay) othersUseFrames(c *Client, t *tab) bool {
	return r.othersOnTab(t, c) || r.watchesFrames(t, "")
}

// dropState forgets that c set key on the attachment sid of t. Call with
// r.mu held.
func (r *Relay) dropState(c *Client, t *tab, sid, key string) {
	ls := r.leftStateOf(t, sid)
	if ls == nil || *ls == nil || (*ls)[c] == nil {
		return
	}
	cs := (*ls)[c]
	cs.keys = slices.DeleteFunc(cs.keys, func(k string) bool { return k == key })
	delete(cs.params, key)
}

// A client's waitForDebuggerOnStart on the person's tab holds each new
// frame (and worker) of it until a debugger lets it run. A client that
// never does, alive or gone, held the person's frames blank for as long
// as it stayed (TestRedTeamHeldFrameOfThePersonsTab). Playwright and
// Puppeteer let a frame run within milliseconds of hearing of it; the
// relay lets it run once the bound has passed, whoever held it. A second
// Runtime.runIfWaitingForDebugger does nothing.

// runHeldFrame lets the frame of child session sid on t, which Chrome
// holds for a debugger, run after syncScriptBound. Call with r.mu held.
func (r *Relay) runHeldFrame(t *tab, sid string) {
	time.AfterFunc(time.Duration(syncScriptBound.Load()), func() {
		if r.ctx.Err() != nil {
			return
		}
		r.mu.Lock()
		ch := r.children[sid]
		r.mu.Unlock()
		if ch == nil || ch.tab != t {
			return
		}
		r.b.GoNow(&wire.Frame{Method: string(cdproto.CommandRuntimeRunIfWaitingForDebugger), Params: emptyObject, TabID: t.id, SessionID: sid}, func(*wire.Frame, error) {})
	})
}
