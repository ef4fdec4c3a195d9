package extcdp

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
)

// A client's script on a tab the person opened is bounded (wedge.go), but
// a loop it leaves behind, with setTimeout or an event handler, runs later
// as the page's own task, which no timeout of the client's commands
// reaches: it held the person's tab for good, whether its client left or
// stayed (TestRedTeamTimerLoopOutlivesNoClient). Chrome refuses
// Runtime.terminateExecution to an extension's debugger; what ends a
// running script is Debugger.pause, which interrupts it, then
// Debugger.resume with terminateOnResume; and Debugger.pause needs the
// Debugger domain on before the loop starts, Debugger.enable waiting
// behind it.
//
// So before a client's first script on such a tab the relay turns the
// guard on: Debugger.enable, and Debugger.setBreakpointsActive false, so
// that the page's own debugger statements do not pause it. While it is on,
// a watchdog asks the tab every guardEvery for Runtime.getIsolateId, which
// the renderer answers only between tasks; when no answer comes within
// syncScriptBound, it ends the running script, if one runs (runsScript:
// not a renderer waiting in the page's alert). When the last client
// leaves, the relay asks once more before it detaches. A client hears
// Debugger's events only once it enabled Debugger itself, and then as
// from Chrome: its enable comes after a disable, so that Chrome lists the
// page's scripts to it; when it lets go, the guard is on again. A
// person's frame in a renderer of its own has a guard of its own
// (guardChild). docs/decisions/2026-11-27-a-script-does-not-wedge-the-persons-tab.md.

// guardEvery is how often the watchdog asks a guarded tab.
const guardEvery = 2 * time.Second

// guardState is the guard of one attachment: a tab's own, or a child
// session's (the person's frame or worker in a renderer of its own).
type guardState struct {
	on bool
	// users are the clients that enabled Debugger themselves: they hear
	// its events, and their breakpoints are active.
	users map[*Client]bool
	// stop ends the watchdog.
	stop chan struct{}
	// ending counts the watchdog's pauses under way: the Debugger.paused
	// they bring is theirs to resume.
	ending int
	// pausedAt is when a client's debugger paused the page, zero when it
	// runs.
	pausedAt time.Time
	// endingAt is when the watchdog last began to end a script.
	endingAt time.Time
}

// guardAt is the guard of t's own attachment (sid ""), or of its child
// session sid: the person's frame or worker in a renderer of its own,
// which the tab's guard does not reach (TestRedTeamGuardInAPersonsFrame).
// nil when the child is gone. Call with r.mu held.
func (r *Relay) guardAt(t *tab, sid string) *guardState {
	if sid == "" {
		return &t.guard
	}
	if ch := r.children[sid]; ch != nil && ch.tab == t {
		return &ch.guard
	}
	return nil
}

// guardAttachment turns the guard of t's attachment sid on, once, before
// a script of c runs there; c did not open t.
func (c *Client) guardAttachment(t *tab, sid string) {
	r := c.r
	r.mu.Lock()
	g := r.guardAt(t, sid)
	if g == nil || g.stop != nil || !t.attached {
		r.mu.Unlock()
		return
	}
	stop := make(chan struct{})
	g.stop = stop
	need := !g.on // still on from a release a new attach overtook
	g.on = true
	users := len(g.users) > 0
	r.mu.Unlock()
	if need {
		ctx, cancel := context.WithTimeout(c.ctx, probeTimeout)
		r.guardOn(ctx, t, sid, users)
		cancel()
	}
	// The watchdog ends with the guard (stop), its child, or the relay
	// (Close lets go of every tab first).
	r.goWork(1<<62, func(ctx context.Context) { r.watch(ctx, t, sid, stop) })
}

// guardCommand does, before a command of c's on t's attachment sid (its
// own, or a child session's) goes to Chrome, what the guard needs, and
// reports whether it answered the command itself:
//   - (forward turns the guard on before what may run c's code on a tab
//     c did not open, which is nearly every command: see runsCode);
//   - a client of Debugger's Debugger.enable comes after a disable, for
//     Chrome lists the page's scripts only to an enable of a Debugger that
//     was off;
//   - to a client that did not enable Debugger, Debugger is off, as on
//     Chrome, so that it cannot turn the guard's off or skip its pause;
//   - a disable turns Chrome's Debugger off only for the last client of
//     Debugger, and the guard's comes back after;
//   - Debugger.setSkipAllPauses, which would skip the guard's pause, is
//     refused on a tab the client did not open, and so is blackboxing.
func (c *Client) guardCommand(m *cdproto.Message, t *tab, sid string) bool {
	r := c.r
	// forward turned the guard on for a command that runs code.
	switch m.Method {
	case cdproto.CommandDebuggerEnable:
		r.mu.Lock()
		g := r.guardAt(t, sid)
		lend := g != nil && g.on && len(g.users) == 0
		r.guardUses(t, sid, c, true)
		r.mu.Unlock()
		if !lend {
			return false
		}
		// Chrome's disable, then the client's enable, and its breakpoints
		// on, as an enable of Chrome's own leaves them (the guard's stay
		// off across the two).
		ctx, cancel := context.WithTimeout(c.ctx, probeTimeout)
		defer cancel()
		res, err := r.ask(ctx, t, sid, cdproto.CommandDebuggerDisable, emptyObject)
		if err == nil {
			res, err = r.ask(ctx, t, sid, cdproto.CommandDebuggerEnable, m.Params)
		}
		if err == nil {
			_, err = r.ask(ctx, t, sid, cdproto.CommandDebuggerSetBreakpointsActive, jsonv2.Value(`{"active":true}`))
		}
		if err != nil {
			r.mu.Lock()
			if g := r.guardAt(t, sid); g != nil {
				delete(g.users, c)
			}
			r.mu.Unlock()
			c.failErr(m.ID, m.SessionID, err)
			return true
		}
		// Noted as the command would be had it gone through: another
		// client's leave takes back only what that client set.
		r.mu.Lock()
		if sid == "" {
			t.noteSetup(string(m.Method), m.Params)
		}
		r.noteState(c, t, sid, string(m.Method), m.Params)
		r.mu.Unlock()
		c.reply(m.ID, m.SessionID, res)
		return true
	case cdproto.CommandDebuggerDisable:
		r.mu.Lock()
		var on, last bool
		if g := r.guardAt(t, sid); g != nil {
			on = g.on
			last = on && g.users[c] && len(g.users) == 1
			if !last {
				delete(g.users, c)
			}
		}
		r.mu.Unlock()
		if !on {
			return false
		}
		if !last {
			// Off for c; Chrome's stays on, for the guard or the others.
			c.reply(m.ID, m.SessionID, nil)
			return true
		}
		// What c set goes with Chrome's disable; the guard's own comes back.
		ctx, cancel := context.WithTimeout(c.ctx, probeTimeout)
		defer cancel()
		_, err := r.ask(ctx, t, sid, cdproto.CommandDebuggerDisable, emptyObject)
		r.mu.Lock()
		if g := r.guardAt(t, sid); g != nil {
			delete(g.users, c)
		}
		r.mu.Unlock()
		r.guardOn(ctx, t, sid, false)
		if err != nil {
			c.failErr(m.ID, m.SessionID, err)
		} else {
			c.reply(m.ID, m.SessionID, nil)
		}
		return true
	}
	if !strings.HasPrefix(string(m.Method), "Debugger.") {
		return false
	}
	if c.refuseSkip(m, t) || c.refuseCondition(m, t) {
		return true
	}
	r.mu.Lock()
	g := r.guardAt(t, sid)
	notEnabled := g != nil && g.on && !g.users[c]
	r.mu.Unlock()
	if notEnabled {
		c.fail(m.ID, m.SessionID, -32000, "Debugger agent is not enabled")
		return true
	}
	return false
}

// refuseSkip fails, on a tab c did not open (or a frame of it), what would
// make V8 skip the guard's pause: setSkipAllPauses, and blackboxing.
func (c *Client) refuseSkip(m *cdproto.Message, t *tab) bool {
	if m.Method != cdproto.CommandDebuggerSetSkipAllPauses && !isBlackbox(m.Method) || c.opened(t) {
		return false
	}
	if m.Method == cdproto.CommandDebuggerSetSkipAllPauses {
		var p struct {
			Skip bool `json:"skip"`
		}
		if jsonv2.Unmarshal(m.Params, &p, wire.Options) != nil || p.Skip {
			c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab refuses Debugger.setSkipAllPauses on tab %d, which the person opened: it would keep livetab from ending a script that holds the page; deactivate breakpoints with Debugger.setBreakpointsActive, or debug a tab of your own (Target.createTarget)", t.id))
			return true
		}
	}
	if skipsPause(m) {
		c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab refuses %s on tab %d, which the person opened: V8 does not pause in blackboxed code, which would keep livetab from ending a script that holds the page; debug a tab of your own (Target.createTarget) to blackbox scripts", m.Method, t.id))
		return true
	}
	return false
}

// skipsPause reports whether m blackboxes anything: V8 ignores a pause
// whose frames are all blackboxed, the guard's too
// (TestRedTeamGuardBlackboxed). Params it cannot read count as blackboxing.
func skipsPause(m *cdproto.Message) bool {
	var p struct {
		Patterns      []string       `json:"patterns"`
		SkipAnonymous bool           `json:"skipAnonymous"`
		Positions     []jsonv2.Value `json:"positions"`
		UniqueIDs     []string       `json:"uniqueIds"`
	}
	if !isBlackbox(m.Method) {
		return false
	}
	if jsonv2.Unmarshal(m.Params, &p, wire.Options) != nil {
		return true
	}
	return len(p.Patterns) > 0 || p.SkipAnonymous || len(p.Positions) > 0 || len(p.UniqueIDs) > 0
}

// runsCode reports whether method may run a client's code on the page.
// Naming the ones that do missed some each time: a page a client's
// Fetch.fulfillRequest supplies, a div DOM.setNodeName makes a script, a
// function Debugger.setScriptSource rewrites (TestRedTeamLoopWays). So it
// is every command but those that surely run none: the target's own
// (Target.*), the domains' enable and disable, and letting a held target
// go.
func runsCode(method cdproto.MethodType) bool {
	s := string(method)
	switch {
	case strings.HasPrefix(s, "Target."), strings.HasSuffix(s, ".enable"), strings.HasSuffix(s, ".disable"),
		method == cdproto.CommandRuntimeRunIfWaitingForDebugger:
		return false
	}
	return true
}

// refuseCondition fails, on a tab c did not open (or any tab of a client
// held to domains), a breakpoint with a condition (a logpoint is one): V8
// runs the condition inside the page's own task with pauses off, so the
// guard cannot end a condition that never returns, and the person's tab
// stayed frozen after the client left (TestRedTeamLoopWays).
func (c *Client) refuseCondition(m *cdproto.Message, t *tab) bool {
	switch m.Method {
	case cdproto.CommandDebuggerSetBreakpoint, cdproto.CommandDebuggerSetBreakpointByURL, cdproto.CommandDebuggerSetBreakpointOnFunctionCall:
	default:
		return false
	}
	own := c.opened(t)
	if own && len(c.heldDomains()) == 0 {
		// On a tab of a client held to domains, a condition set by URL
		// stays for the next documents, and would run in one outside
		// them, as a script for new documents would (initscript.go).
		return false
	}
	var p struct {
		Condition string `json:"condition"`
	}
	if jsonv2.Unmarshal(m.Params, &p, wire.Options) == nil && p.Condition == "" {
		return false
	}
	if own {
		c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab policy: %s with a condition refused: a connection held to domains (Livetab.setPolicy) may not run code in the next pages of its tab, which may be outside them; set the breakpoint without a condition, or debug from a connection without domains", m.Method))
		return true
	}
	c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab refuses %s with a condition on tab %d, which the person opened: a condition runs inside the page's own task, where livetab cannot end it should it never return; set the breakpoint without a condition, or debug a tab of your own (Target.createTarget)", m.Method, t.id))
	return true
}

func isBlackbox(method cdproto.MethodType) bool {
	return method == cdproto.CommandDebuggerSetBlackboxPatterns || method == cdproto.CommandDebuggerSetBlackboxedRanges || method == cdproto.CommandDebuggerSetBlackboxExecutionContexts
}

// guardOn sends what the guard of t's attachment sid needs: Debugger,
// and, with no client of Debugger there, breakpoints off.
func (r *Relay) guardOn(ctx context.Context, t *tab, sid string, users bool) {
	if _, err := r.ask(ctx, t, sid, cdproto.CommandDebuggerEnable, emptyObject); err != nil {
		r.log.Info("guard: Debugger.enable", "tab", t.id, "session", sid, "err", err)
		return
	}
	if !users {
		r.ask(ctx, t, sid, cdproto.CommandDebuggerSetBreakpointsActive, jsonv2.Value(`{"active":false}`))
	}
}

// watch asks t every guardEvery whether its page runs, and ends the script
// that holds it past the bound, until stop.
func (r *Relay) watch(ctx context.Context, t *tab, sid string, stop chan struct{}) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-time.After(guardEvery):
		}
		if r.pausedTooLong(ctx, t, sid) {
			continue
		}
		if r.heldPastBound(ctx, t, sid) {
			r.endScript(ctx, t, sid)
		}
	}
}

// pausedTooLong resumes t when a client's debugger has held it paused
// past the bound, and reports whether it did: a client of Debugger that
// pauses the person's page, or stops it at a breakpoint, held it for as
// long as it stayed (TestRedTeamGuardPauseHeld). The client hears
// Debugger.resumed, as when the person resumes from DevTools.
func (r *Relay) pausedTooLong(ctx context.Context, t *tab, sid string) bool {
	bound := time.Duration(syncScriptBound.Load())
	r.mu.Lock()
	var at time.Time
	if g := r.guardAt(t, sid); g != nil {
		at = g.pausedAt
	}
	r.mu.Unlock()
	if at.IsZero() || time.Since(at) < bound {
		return false
	}
	rctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	_, err := r.ask(rctx, t, sid, cdproto.CommandDebuggerResume, emptyObject)
	r.log.Warn("resumed the tab the person opened, which a client's debugger held paused past the bound", "tab", t.id, "session", sid, "bound", bound, "err", err)
	return true
}

// heldPastBound reports whether a script holds t's attachment sid past the
// bound: no answer between tasks, a script (not a dialog) running, and, a
// last look, still no answer: the script may have ended meanwhile, and a
// pause would then end the next one.
func (r *Relay) heldPastBound(ctx context.Context, t *tab, sid string) bool {
	return !r.answers(ctx, t, sid) && r.runsScript(ctx, t, sid) && !r.answersWithin(ctx, t, sid, stillRunsWait)
}

// runsScriptWait is how long runsScript waits for the interrupt.
const runsScriptWait = time.Second

// runsScript reports whether the renderer that did not answer between
// tasks runs a script, rather than waits in a dialog of the page's (an
// alert, a print) or a synchronous request: Chrome runs a few commands,
// Debugger.getStackTrace among them, in an interrupt of the running
// script, which a waiting renderer does not take. A pause sent to a
// renderer that waits lands as the wait ends, and it ended the script
// that opened the person's alert the instant they answered it
// (TestGuardLeavesADialogAlone). Its error (no such stack) is an answer.
func (r *Relay) runsScript(ctx context.Context, t *tab, sid string) bool {
	wctx, cancel := context.WithTimeout(ctx, runsScriptWait)
	defer cancel()
	_, err := r.ask(wctx, t, sid, cdproto.CommandDebuggerGetStackTrace, jsonv2.Value(`{"stackTraceId":{"id":"0"}}`))
	return err == nil || wctx.Err() == nil
}

// guardGrace is how much longer than the bound the watchdog waits for an
// answer. A client's bounded script ends by V8's own timeout at the
// bound, and the renderer's answer then takes a while to come back under
// load: a pause sent to a renderer that had just become free waits for the
// next script, and ends that one, a client's next command or the page's
// own next task (TestClientsCompat, in CI).
const guardGrace = time.Second

// stillRunsWait is how long endScript's last look waits for an answer
// between tasks.
const stillRunsWait = 500 * time.Millisecond

// answersWithin reports whether t's renderer answers between tasks within
// wait; an error other than the wait (the tab went away) counts as an
// answer, there being nothing to end.
func (r *Relay) answersWithin(ctx context.Context, t *tab, sid string, wait time.Duration) bool {
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	_, err := r.ask(wctx, t, sid, cdproto.CommandRuntimeGetIsolateID, emptyObject)
	return err == nil || wctx.Err() == nil || ctx.Err() != nil
}

// answers reports whether t's renderer answers between tasks within the
// bound and its grace.
func (r *Relay) answers(ctx context.Context, t *tab, sid string) bool {
	return r.answersWithin(ctx, t, sid, time.Duration(syncScriptBound.Load())+guardGrace)
}

// endScript interrupts the script that runs on t and ends it. The
// extension resumes the pause as its Debugger.paused comes, with
// terminateOnResume, rather than the relay a round trip later: a paused
// page drops the clicks of the person's that come meanwhile. Not before
// the event: Chrome runs a Debugger.resume at once, ahead of the pause,
// and the page would stay paused.
func (r *Relay) endScript(ctx context.Context, t *tab, sid string) {
	r.mu.Lock()
	g := r.guardAt(t, sid)
	if g != nil {
		g.ending++
		g.endingAt = time.Now()
	}
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		// The guard may have ended meanwhile, and begun again.
		if g != nil && g.ending > 0 {
			g.ending--
		}
		r.mu.Unlock()
	}()
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	res, err := r.b.Call(pctx, wire.EndScript, 0, endScriptParams(t.id, sid))
	var out struct {
		Ended bool `json:"ended"`
	}
	if err == nil {
		err = jsonv2.Unmarshal(res, &out, wire.Options)
	}
	if err != nil || !out.Ended {
		r.log.Info("guard: the script holding a tab did not end", "tab", t.id, "err", err)
		return
	}
	r.log.Warn("ended a script that held a tab the person opened past the bound", "tab", t.id, "session", sid, "bound", time.Duration(syncScriptBound.Load()))
}

// guardEndedSince reports whether the watchdog began to end a script on
// t's attachment sid since when: a client's bounded script it ended is
// answered as one its bound ended.
func (r *Relay) guardEndedSince(t *tab, sid string, when time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.guardAt(t, sid)
	return g != nil && !g.endingAt.Before(when)
}

// endScriptParams names the tab, and the child session of its frame or
// worker when sid is not empty.
func endScriptParams(tabID int64, sid string) jsonv2.Value {
	if sid == "" {
		return tabParams(tabID)
	}
	return jsonv2.Value(fmt.Sprintf(`{"tabId":%d,"sessionId":%q}`, tabID, sid))
}

// stopGuard ends the child's watchdog. Call with r.mu held.
func (ch *child) stopGuard() {
	if ch.guard.stop != nil {
		close(ch.guard.stop)
		ch.guard.stop = nil
	}
}

// onGuardEvent takes a Debugger event of t's attachment sid; it reports
// whether the event goes to sessions whose client is not a user of
// Debugger there. A pause with no client of Debugger there and none of the
// watchdog's under way (one that came too late, the script having ended
// by itself) is let go of: nobody else would. Call with r.mu held.
func (r *Relay) onGuardEvent(t *tab, sid string, method cdproto.MethodType) (deliver bool) {
	g := r.guardAt(t, sid)
	if g == nil || !g.on || !strings.HasPrefix(string(method), "Debugger.") {
		return true
	}
	switch method {
	case cdproto.EventDebuggerPaused:
		g.pausedAt = time.Now()
	case cdproto.EventDebuggerResumed:
		g.pausedAt = time.Time{}
	}
	if method == cdproto.EventDebuggerPaused && len(g.users) == 0 && g.ending == 0 {
		r.b.GoNow(&wire.Frame{Method: string(cdproto.CommandDebuggerResume), TabID: t.id, SessionID: sid, Params: emptyObject}, func(*wire.Frame, error) {})
	}
	return false
}

// guardOff ends t's guard, as its attachment ends. Call with r.mu held.
func (r *Relay) guardOff(t *tab) {
	r.stopWatch(t)
	t.guard = guardState{}
}

// stopWatch ends t's watchdog. Call with r.mu held.
func (r *Relay) stopWatch(t *tab) {
	if t.guard.stop != nil {
		close(t.guard.stop)
		t.guard.stop = nil
	}
}

// lastLook runs as the last session leaves t, whose own attachment or
// whose frames in renderers of their own (child sessions frames) are
// guarded, before the extension lets go of it: a loop left behind
// that runs now is ended first, as nothing could end it after. A loop set
// to start later still runs, on a tab livetab no longer holds. detach lets
// go of the tab. Call with r.mu held.
func (r *Relay) lastLook(t *tab, frames []string, detach func()) {
	r.stopWatch(t)
	t.guard.users = nil
	sids := frames
	if t.guard.on {
		sids = append([]string{""}, frames...)
	}
	if !r.addWork() { // the relay closed: no look, the detach all the same
		t.guard = guardState{}
		detach()
		return
	}
	go func() {
		defer r.work.Done()
		// A new attach waits for the look: it could otherwise land
		// between the check below and the detach, which would undo it.
		t.attachMu.Lock()
		defer t.attachMu.Unlock()
		ctx, cancel := context.WithTimeout(r.ctx, time.Duration(syncScriptBound.Load())+2*probeTimeout)
		defer cancel()
		var wg sync.WaitGroup
		for _, sid := range sids {
			wg.Go(func() {
				if r.heldPastBound(ctx, t, sid) {
					r.endScript(ctx, t, sid)
				}
			})
		}
		wg.Wait()
		r.mu.Lock()
		defer r.mu.Unlock()
		if t.attached {
			return // a client attached again meanwhile
		}
		t.guard = guardState{}
		detach()
	}()
}

// guardUses notes that c enabled (on) or disabled Debugger on t's
// attachment sid; a last user gone, the guard is on again. Call with r.mu
// held.
func (r *Relay) guardUses(t *tab, sid string, c *Client, on bool) {
	g := r.guardAt(t, sid)
	if g == nil {
		return
	}
	if on {
		if g.users == nil {
			g.users = map[*Client]bool{}
		}
		g.users[c] = true
		return
	}
	if !g.users[c] {
		return
	}
	delete(g.users, c)
	if g.on && len(g.users) == 0 && t.attached {
		r.goWork(probeTimeout, func(ctx context.Context) { r.guardOn(ctx, t, sid, false) })
	}
}
