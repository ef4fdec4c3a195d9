package extcdp_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// TestRedTeamRequestPausedWhileWorkerAway: client A intercepts its tab's
// requests (Fetch.enable), and the extension's service worker stops. The
// debugger outlives the worker, so Chrome goes on pausing the page's
// requests; one paused while no worker listens is told to nobody, and
// waited for an answer that no one would give: the page's request hung.
// It must reach A once the worker is back, or go on by itself.
func TestRedTeamRequestPausedWhileWorkerAway(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	a := dialRaw(t)
	tA := field(a.must("", "Target.createTarget", map[string]any{"url": site.URL + "/form?held-away"}), "targetId")
	sA := a.attach(tA)
	a.eval(sA, "1")
	a.must(sA, "Fetch.enable", map[string]any{"patterns": []any{map[string]any{"urlPattern": "*held-away-request*"}}})
	// The page asks after the worker stopped.
	a.eval(sA, `setTimeout(() => fetch('`+srv.URL+`/held-away-request').then(r => r.text()).then(v => window.got = v, e => window.got = 'failed: ' + e), 1500), 1`)
	u := stopWorker(t)
	time.Sleep(2500 * time.Millisecond)
	wakeWorker(t, u)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case ev := <-a.evs:
			if ev.Method == "Fetch.requestPaused" {
				a.must(sA, "Fetch.continueRequest", map[string]any{"requestId": field(ev.Params, "requestId")})
			}
		case <-time.After(200 * time.Millisecond):
		}
		if got := a.eval(sA, "String(window.got)"); got != "undefined" {
			t.Logf("the page's request: %q, the server saw %d", got, served.Load())
			return
		}
	}
	t.Fatalf("the page's request paused while the worker was away hangs 10 s after it came back (the server saw %d requests; A heard of it: %v)", served.Load(), a.hasEvent("Fetch.requestPaused", "held-away-request"))
}
