package extcdp_test

import (
	"context"
	"testing"
	"time"
)

// TestRedTeamDiesWhilePausedLeavesThePageRunning: client A debugs a tab
// the person opened and client B uses too (B never turns Debugger on), and
// A dies while the person's page is stopped in A's debugger: at A's
// breakpoint, at a debugger statement, on an exception A asked to pause
// on. The person's page must run again within a bound once A is gone.
func TestRedTeamDiesWhilePausedLeavesThePageRunning(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup [][2]any
		probe string
	}{
		{name: "breakpointByUrl",
			setup: [][2]any{{"Debugger.setBreakpointByUrl", map[string]any{"urlRegex": `livetab-dies-paused\.js`, "lineNumber": 1}}},
			probe: "setTimeout(function livetabProbe() {\n window.livetabRan = 1\n}, 0), 1 //# sourceURL=livetab-dies-paused.js"},
		{name: "debuggerStatement",
			probe: "setTimeout(function livetabProbe() { debugger; window.livetabRan = 1 }, 0), 1"},
		{name: "pauseOnExceptions",
			setup: [][2]any{{"Debugger.setPauseOnExceptions", map[string]any{"state": "all"}}},
			probe: "setTimeout(function livetabProbe() { try { throw new Error('x') } catch (e) {} window.livetabRan = 1 }, 0), 1"},
		{name: "xhrBreakpoint",
			setup: [][2]any{{"DOMDebugger.setXHRBreakpoint", map[string]any{"url": "dies-paused-xhr"}}},
			probe: "setTimeout(function livetabProbe() { fetch('/form?dies-paused-xhr').catch(() => {}); window.livetabRan = 1 }, 0), 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, tok := endpoint(t)
			id := userTab(t, site.URL+"/form?dies-paused-"+tc.name)
			closeUserTab(t, id)
			a, b := dialRawTo(t, srv, tok), dialRawTo(t, srv, tok)
			sa, sb := a.attach(id), b.attach(id)
			a.eval(sa, "1")
			b.eval(sb, "1")
			b.bound = 10 * time.Second
			a.must(sa, "Debugger.enable", nil)
			for _, c := range tc.setup {
				a.must(sa, c[0].(string), c[1])
			}
			b.must(sb, "Runtime.evaluate", map[string]any{"expression": "window.livetabRan = 0, " + tc.probe})
			deadline := time.Now().Add(10 * time.Second)
			for !a.hasEvent("Debugger.paused", "") && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if !a.hasEvent("Debugger.paused", "") {
				t.Fatal("the page never paused in A's debugger; the test shows nothing")
			}
			a.ws.CloseNow()
			<-a.closed
			start := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			u, err := env.User(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer u.Close()
			v, err := u.Eval(ctx, id, `new Promise(ok => { const w = () => window.livetabRan ? ok(1) : setTimeout(w, 10); w() })`)
			t.Logf("the person's page after A died paused: %s %v after %v", v, err, time.Since(start).Round(100*time.Millisecond))
			if err != nil || string(v) != "1" || time.Since(start) > 10*time.Second {
				t.Errorf("the person's page stayed stopped in the debugger of a client that died: %s %v after %v", v, err, time.Since(start).Round(100*time.Millisecond))
			}
		})
	}
}
