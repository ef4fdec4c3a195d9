package extcdp_test

import (
	"strconv"
	"testing"
	"time"
)

// TestRedTeamFrozenPersonsTab: a client attached to the person's tab
// stops its page without running a script: Page.setWebLifecycleState
// frozen (or Emulation.setScriptExecutionDisabled). The relay takes these
// back when the client leaves (leftstate.go), but not while it stays, as
// it now does a debugger pause held past the bound (pausedTooLong): the
// client stays, and the person's page does nothing for as long.
func TestRedTeamFrozenPersonsTab(t *testing.T) {
	for _, c := range []struct {
		name   string
		method string
		params map[string]any
	}{
		{"control", "Runtime.evaluate", map[string]any{"expression": "1"}},
		{"frozen", "Page.setWebLifecycleState", map[string]any{"state": "frozen"}},
		{"scriptsOff", "Emulation.setScriptExecutionDisabled", map[string]any{"value": true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, sa, id, _ := tickingPerson(t)
			a.eval(sa, "1")
			_, err := a.call(sa, c.method, c.params)
			t.Logf("%s: %v", c.method, err)
			if err != nil {
				return
			}
			time.Sleep(15 * time.Second) // past the bound (10 s) and the guard's grace
			ctx, u := asPerson(t)
			ticks := func() int {
				v, err := u.Eval(ctx, id, `String(window.ticks)`)
				if err != nil {
					t.Fatalf("the person's tab did not answer: %v", err)
				}
				s := string(v)
				if q, err := strconv.Unquote(s); err == nil {
					s = q
				}
				n, _ := strconv.Atoi(s)
				return n
			}
			n1 := ticks()
			time.Sleep(2 * time.Second)
			n2 := ticks()
			t.Logf("the person's page ticked %d -> %d in 2 s, 15 s after the client's %s", n1, n2, c.method)
			if n2-n1 < 5 {
				t.Errorf("the person's page is still stopped 15 s after %s %v of a client that stays: ticks %d -> %d in 2 s", c.method, c.params, n1, n2)
			}
		})
	}
}
