package extcdp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/extcdp"
)

// TestRedTeamGuardFrameLeft: the client leaves its loop in the person's
// cross-site iframe and goes. Before the frame's guard had a last look,
// the relay let go of the tab with the frame still held, and nothing
// ended the loop after.
func TestRedTeamGuardFrameLeft(t *testing.T) {
	defer extcdp.SetSyncScriptBound(wedgeBound)()
	a, sf, frame := personsFrame(t, "guard-frame-left")
	a.must(sf, "Runtime.evaluate", map[string]any{"expression": "setTimeout(() => { for (;;) {} }, 0), 1"})
	time.Sleep(500 * time.Millisecond)
	a.ws.CloseNow()
	<-a.closed
	personSeesItBack(t, frame)
}

// TestRedTeamGuardFrameDebugger: on the person's guarded frame, as on its
// tab, a client that did not enable Debugger finds it off (its disable
// cannot turn the guard's off, and it hears none of its events), and a client of Debugger that pauses the
// frame and stays has the pause resumed past the bound.
func TestRedTeamGuardFrameDebugger(t *testing.T) {
	defer extcdp.SetSyncScriptBound(wedgeBound)()
	t.Run("notEnabled", func(t *testing.T) {
		a, sf, frame := personsFrame(t, "guard-frame-not-enabled")
		a.must(sf, "Runtime.evaluate", map[string]any{"expression": "setTimeout(() => { setTimeout(() => { for (;;) {} }, 300) }, 0), 1"})
		// Its disable is answered, as Chrome answers one of a Debugger
		// that is off, and changes nothing.
		a.must(sf, "Debugger.disable", nil)
		for _, m := range []string{"Debugger.resume", "Debugger.setBreakpointsActive"} {
			if _, err := a.call(sf, m, map[string]any{"active": true}); err == nil || !strings.Contains(err.Error(), "not enabled") {
				t.Fatalf("%s of a client that did not enable Debugger on the guarded frame: %v, want Debugger agent is not enabled", m, err)
			}
		}
		time.Sleep(time.Second)
		personSeesItBack(t, frame)
		if a.heard("Debugger.", sf) {
			t.Fatal("a client that did not enable Debugger heard the frame guard's events")
		}
	})
	t.Run("pauseHeld", func(t *testing.T) {
		a, sf, frame := personsFrame(t, "guard-frame-pause")
		a.must(sf, "Runtime.evaluate", map[string]any{"expression": "1"})
		a.must(sf, "Debugger.enable", nil)
		a.must(sf, "Debugger.pause", nil)
		go a.send(sf, "Runtime.evaluate", map[string]any{"expression": "1"}) // the pause lands
		time.Sleep(time.Second)
		personSeesItBack(t, frame)
		if !a.heard("Debugger.resumed", sf) {
			t.Fatal("the client whose pause was resumed heard no Debugger.resumed")
		}
	})
}
