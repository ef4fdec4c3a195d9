package extcdp_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// TestRedTeamLeftCSPBreakpointStopsThePersonsPage: client A sets
// DOMDebugger.setBreakOnCSPViolation on a tab the person opened, where
// client B keeps its Debugger on, and dies. Like A's other breakpoints
// (TestRedTeamLeftBreakpointsStopThePersonsPage), it must go with A: the
// person's page must not stop under B's debugger at a Trusted Types
// violation after A left.
func TestRedTeamLeftCSPBreakpointStopsThePersonsPage(t *testing.T) {
	srv := loopbackServer(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "require-trusted-types-for 'script'")
		fmt.Fprint(w, `<!doctype html><title>tt</title><div id=sink></div>`)
	}))
	ep, tok := endpoint(t)
	id := userTab(t, srv.URL+"/tt")
	t.Cleanup(func() {
		if u, err := env.User(context.Background()); err == nil {
			u.CloseTab(context.Background(), id)
			u.Close()
		}
	})
	a, b := dialRawTo(t, ep, tok), dialRawTo(t, ep, tok)
	sa, sb := a.attach(id), b.attach(id)
	a.eval(sa, "1")
	b.eval(sb, "1")
	b.bound = 15 * time.Second
	b.must(sb, "Debugger.enable", nil)
	// The page's own script writes a string to a sink: Chrome throws, the
	// page catches it.
	probe := `setTimeout(function livetabProbe() { try { document.getElementById("sink").innerHTML = "<b>x</b>" } catch (e) {} window.livetabRan = 1 }, 0), 1`
	if got := pausedBy(t, b, sb, probe); got != "ran" {
		t.Fatalf("before A came, the page's script: %s", got)
	}
	a.must(sa, "Debugger.enable", nil)
	a.must(sa, "DOMDebugger.setBreakOnCSPViolation", map[string]any{"violationTypes": []string{"trustedtype-sink-violation"}})
	// Under load the first violation after the setting once ran through
	// (1 run in 4 beside other browsers): a second look.
	if got := pausedBy(t, b, sb, probe); got != "paused" {
		time.Sleep(500 * time.Millisecond)
		if got := pausedBy(t, b, sb, probe); got != "paused" {
			t.Fatalf("with A's breakpoint, the page's script: %s (the case shows nothing)", got)
		}
	}
	a.ws.CloseNow()
	<-a.closed
	time.Sleep(time.Second)
	if got := pausedBy(t, b, sb, probe); got != "ran" {
		t.Errorf("after A left, the person's page %s under B's debugger at A's CSP-violation breakpoint", got)
	}
}
