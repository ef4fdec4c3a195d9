package extcdp_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/livetab/livetab/internal/browsertest"
	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamFramesWorkerOutlivesTheAgent: an agent held to 127.0.0.1 and
// off private addresses (but 127.0.0.1 and 127.0.0.3, which stands for a
// public site here: frames of sites outside the domains are let through)
// opens a hostile page of 127.0.0.1 that embeds a frame of 127.0.0.3. The
// frame registers a service worker that keeps its install event open and
// asks 127.0.0.2 every 100 ms. While the agent runs the worker rules hold
// it; once the agent ends, its lingering rules hold only the requests of
// no tab that a page of its domains started (lingerRules:
// initiatorDomains), and the frame's worker is of another site.
func TestRedTeamFramesWorkerOutlivesTheAgent(t *testing.T) {
	if env == nil {
		browsertest.RequireChromium(t)
	}
	var ticks, alive atomic.Int64
	forbidden := loopbackServer(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/tick-") {
			ticks.Add(1)
		}
		fmt.Fprint(w, "secret")
	}))
	frame := loopbackServer(t, "127.0.0.3", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/sw.js":
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprintf(w, `self.addEventListener('install', (e) => e.waitUntil(new Promise((ok) => {
				let i = 0;
				const t = setInterval(() => { i++; fetch(%q + '/tick-' + i, { mode: 'no-cors' }).catch(() => {}); fetch('/alive-' + i).catch(() => {}); if (i > 300) { clearInterval(t); ok(); } }, 100);
			})));`, forbidden.URL)
		case strings.HasPrefix(r.URL.Path, "/alive-"):
			alive.Add(1)
			fmt.Fprint(w, "ok")
		default:
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<!doctype html><title>ad</title><script>navigator.serviceWorker.register('/sw.js')</script>`)
		}
	}))
	page := loopbackServer(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><title>hostile</title><iframe src="%s/ad"></iframe>`, frame.URL)
	}))
	srv, tok := endpoint(t)
	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"sharedOnly": true, "domains": []string{"127.0.0.1"}, "blockPrivate": true, "privateAllowed": []string{"127.0.0.1", "127.0.0.3"}})
	a.open(page.URL + "/")
	waitFor(t, "the frame's worker running", func() bool { return alive.Load() > 5 })
	time.Sleep(time.Second)
	during := ticks.Load()
	a.ws.CloseNow()
	time.Sleep(time.Second)
	before, aliveBefore := ticks.Load(), alive.Load()
	time.Sleep(3 * time.Second)
	after := ticks.Load() - before
	t.Logf("while the agent ran: %d requests to 127.0.0.2; in the 3 s from 1 s after it ended: %d (worker alive %d more)", during, after, alive.Load()-aliveBefore)
	if alive.Load() == aliveBefore {
		t.Fatalf("the worker stopped: the case shows nothing")
	}
	if during+after > 0 {
		t.Errorf("a worker the agent's page's frame started reached 127.0.0.2: %d times while the agent ran, %d after it ended", during, after)
	}
}
