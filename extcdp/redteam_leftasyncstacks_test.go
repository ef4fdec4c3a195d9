package extcdp_test

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRedTeamLeftAsyncStacksSlowNoTab: client A sets, on a tab the person
// opened and client B uses too, something that is not in leftstate.go's
// list, then dies. Each probe is read by B before A came, while A is there,
// and after A left.
func TestRedTeamLeftAsyncStacksSlowNoTab(t *testing.T) {
	// The page's own async code: 200,000 awaits.
	const awaits = `(async () => { const t = performance.now(); for (let i = 0; i < 2e5; i++) await null; return String(Math.round(performance.now() - t)) })()`
	for _, tc := range []struct {
		name  string
		probe string // js for B; "timing:<js>" for a duration in ms; "cdp:<method>" for B's command
		setup [][2]any
		cmds  [][2]any
	}{
		// The Debugger's own setting is in leftstate.go: the control.
		{name: "asyncStacksDebugger", probe: "timing:" + awaits,
			cmds: [][2]any{{"Debugger.enable", nil}, {"Debugger.setAsyncCallStackDepth", map[string]any{"maxDepth": 10000}}}},
		{name: "asyncStacksRuntime", probe: "timing:" + awaits,
			cmds: [][2]any{{"Runtime.setAsyncCallStackDepth", map[string]any{"maxDepth": 10000}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b, sa, sb := sharedTab(t, "/form?left-stacks-"+tc.name)
			b.bound = 30 * time.Second
			for _, c := range tc.setup {
				b.must(sb, c[0].(string), c[1])
			}
			probe := func() string {
				t.Helper()
				switch {
				case strings.HasPrefix(tc.probe, "cdp:"):
					_, err := b.call(sb, strings.TrimPrefix(tc.probe, "cdp:"), nil)
					if err != nil {
						return "error: " + err.Error()
					}
					return "answered"
				case strings.HasPrefix(tc.probe, "timing:"):
					best := 1 << 30
					for range 3 {
						s := b.eval(sb, strings.TrimPrefix(tc.probe, "timing:"))
						n, _ := strconv.Atoi(s)
						best = min(best, n)
					}
					return strconv.Itoa(best)
				}
				return b.eval(sb, tc.probe)
			}
			before := probe()
			for _, c := range tc.cmds {
				if _, err := a.call(sa, c[0].(string), c[1]); err != nil {
					t.Fatalf("A's %s: %v", c[0], err)
				}
			}
			set := probe()
			t.Logf("before A: %.100q; with A: %.100q", before, set)
			a.ws.CloseNow()
			<-a.closed
			time.Sleep(1500 * time.Millisecond)
			after := probe()
			t.Logf("after A left: %.100q", after)
			if strings.HasPrefix(tc.probe, "timing:") {
				nb, _ := strconv.Atoi(before)
				na, _ := strconv.Atoi(after)
				if na > 3*max(nb, 5) {
					t.Errorf("the person's page runs %d ms where it ran %d ms before A came, after A left", na, nb)
				}
				return
			}
			if set == before {
				t.Logf("A's commands changed nothing seen: the case shows nothing")
				return
			}
			if after != before {
				t.Errorf("after A left: %.120q; before A came: %.120q", after, before)
			}
		})
	}
}
