package extcdp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/extcdp"
)

// TestRedTeamTimerLoopOutlivesNoClient: a client leaves a loop behind on a
// tab the person opened, with setTimeout, so that it runs as the page's
// own task, past the bound of the client's evaluate. Before the guard it
// held the person's tab for good: no answer to the person's click in 30 s,
// whether its client left or stayed.
func TestRedTeamTimerLoopOutlivesNoClient(t *testing.T) {
	defer extcdp.SetSyncScriptBound(wedgeBound)()
	loops := map[string]map[string]any{
		"evaluate": {"expression": "setTimeout(() => { for (;;) {} }, 0), 1"},
		"handler":  {"expression": `document.getElementById("btn").setAttribute("onfocus", "for (;;) {}"), setTimeout(() => document.getElementById("btn").focus(), 0), 1`},
	}
	for name, params := range loops {
		t.Run(name+"/left", func(t *testing.T) {
			a, sa, id := wedgePerson(t, "timer-left-"+name)
			leaveLoop(t, a, sa, id, params, false)
		})
	}
	t.Run("connected", func(t *testing.T) {
		a, sa, id := wedgePerson(t, "timer-connected")
		a.must(sa, "Runtime.evaluate", loops["evaluate"])
		personSeesItBack(t, id)
		if got := personClicks(t, id); got != "1" {
			t.Fatalf("the page counted %q clicks of the person's, want 1", got)
		}
		a.bound = personWaits
		if got := a.eval(sa, "String(clicks)"); got != "1" {
			t.Fatalf("the client's next evaluate: %q, want 1", got)
		}
	})
}

// personSeesItBack waits, as the person would, for their tab to answer
// again (through Chrome's own debugging port), and for a person's
// reaction time: the guard ends the loop by pausing the page an instant,
// and a page drops the clicks that come while it is paused; the
// person's command that waited behind the loop is answered in that
// instant.
func personSeesItBack(t *testing.T, targetID string) {
	t.Helper()
	ctx, u := asPerson(t)
	start := time.Now()
	if _, err := u.Eval(ctx, targetID, "1"); err != nil {
		t.Fatalf("the person's tab did not answer within %v: %v", personWaits, err)
	}
	t.Logf("the person's tab answered again after %v", time.Since(start).Round(time.Millisecond))
	time.Sleep(300 * time.Millisecond)
}

// leaveLoop has client a leave a loop behind on the person's tab id with
// params (a Runtime.evaluate), then leave unless it stays, and fails t
// unless the person gets their tab back.
func leaveLoop(t *testing.T, a *rawClient, sa, id string, params map[string]any, stay bool) {
	t.Helper()
	a.must(sa, "Runtime.evaluate", params)
	time.Sleep(500 * time.Millisecond) // the loop runs
	if !stay {
		a.ws.CloseNow()
		<-a.closed
	}
	personSeesItBack(t, id)
	if got := personClicks(t, id); got != "1" {
		t.Fatalf("the page counted %q clicks of the person's, want 1", got)
	}
}

// TestGuardLeavesThePageAlone: the guard that ends a loop left behind
// (Debugger on, breakpoints off) changes nothing a page or a client sees:
// the page's own debugger statements do not pause it, a client that did
// not enable Debugger hears none of its events, and one that does gets
// the page's scripts as from Chrome.
func TestGuardLeavesThePageAlone(t *testing.T) {
	a, sa, id := wedgePerson(t, "guard-alone")
	a.eval(sa, `window.ticks = 0, setInterval(() => { debugger; ticks++ }, 50), 1`)
	time.Sleep(time.Second)
	if got := a.eval(sa, "String(ticks > 5)"); got != "true" {
		t.Fatalf("the page's own debugger statement paused it: %s ticks in 1 s", a.eval(sa, "String(ticks)"))
	}
	if a.heard("Debugger.", sa) {
		t.Fatal("a client that did not enable Debugger heard its events")
	}
	a.must(sa, "Debugger.enable", nil)
	deadline := time.Now().Add(5 * time.Second)
	for !a.heard("Debugger.scriptParsed", sa) {
		if time.Now().After(deadline) {
			t.Fatal("a client's Debugger.enable got no Debugger.scriptParsed of the page's scripts")
		}
		time.Sleep(50 * time.Millisecond)
	}
	a.must(sa, "Debugger.disable", nil)
	if got := personClicks(t, id); got != "1" {
		t.Fatalf("the page counted %q clicks of the person's, want 1", got)
	}
	before := a.eval(sa, "String(ticks)")
	time.Sleep(500 * time.Millisecond)
	if got := a.eval(sa, "String(ticks > "+before+" + 3)"); got != "true" {
		t.Fatalf("the page stopped ticking after the client's Debugger.disable: %s ticks, %s 500 ms before", a.eval(sa, "String(ticks)"), before)
	}
}

// heard reports whether an event whose method starts with prefix came on
// session.
func (c *rawClient) heard(prefix, session string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.events {
		if strings.HasPrefix(e.Method, prefix) && e.SessionID == session {
			return true
		}
	}
	return false
}

// TestRedTeamGuardTurnedOff: a client tries to turn off what ends its loop
// before it leaves one behind: Debugger.disable, or, having enabled
// Debugger, Debugger.setSkipAllPauses, which skips the guard's pause too.
// Before the guard held against them, each loop held the person's tab
// past 30 s.
func TestRedTeamGuardTurnedOff(t *testing.T) {
	defer extcdp.SetSyncScriptBound(wedgeBound)()
	t.Run("disable", func(t *testing.T) {
		a, sa, id := wedgePerson(t, "guard-disable")
		a.must(sa, "Debugger.disable", nil)
		if _, err := a.call(sa, "Debugger.setBreakpointsActive", map[string]any{"active": true}); err == nil || !strings.Contains(err.Error(), "Debugger agent is not enabled") {
			t.Fatalf("Debugger.setBreakpointsActive of a client that did not enable Debugger: %v, want Chrome's \"Debugger agent is not enabled\"", err)
		}
		leaveLoop(t, a, sa, id, map[string]any{"expression": "setTimeout(() => { for (;;) {} }, 0), 1"}, false)
	})
	t.Run("skip", func(t *testing.T) {
		a, sa, id := wedgePerson(t, "guard-skip")
		a.must(sa, "Debugger.enable", nil)
		if _, err := a.call(sa, "Debugger.setSkipAllPauses", map[string]any{"skip": true}); err == nil || !strings.Contains(err.Error(), "livetab refuses") {
			t.Fatalf("Debugger.setSkipAllPauses on the person's tab: %v, want refused", err)
		}
		a.must(sa, "Debugger.setSkipAllPauses", map[string]any{"skip": false})
		leaveLoop(t, a, sa, id, map[string]any{"expression": "setTimeout(() => { for (;;) {} }, 0), 1"}, false)
	})
}
