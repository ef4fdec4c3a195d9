package extcdp_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestRedTeamLingerBlocksThePersonsWorker: a hostile program with the
// endpoint's token sets a policy naming the person's own site (127.0.0.5)
// off private addresses, and leaves at once. For five minutes after, the
// extension's lingering worker rules hold the person's own service
// workers of that site off private addresses (127.0.0.2): a program that
// is gone still changes what the person's own pages may do. A control
// site (127.0.0.6) no program named shows the worker reaches 127.0.0.2.
func TestRedTeamLingerBlocksThePersonsWorker(t *testing.T) {
	var hits [2]atomic.Int64
	forbidden := loopbackServer(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/from-5") {
			hits[0].Add(1)
		} else if strings.HasPrefix(r.URL.Path, "/from-6") {
			hits[1].Add(1)
		}
		fmt.Fprint(w, "ok")
	}))
	site := func(ip, tag string) string {
		s := loopbackServer(t, ip, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/sw.js" {
				w.Header().Set("Content-Type", "text/javascript")
				fmt.Fprintf(w, `self.addEventListener('install', (e) => e.waitUntil(new Promise((ok) => {
					let i = 0;
					const t = setInterval(() => { i++; fetch(%q + '/%s-' + i, { mode: 'no-cors' }).catch(() => {}); if (i > 60) { clearInterval(t); ok(); } }, 100);
				})));`, forbidden.URL, tag)
				return
			}
			fmt.Fprint(w, `<!doctype html><title>person's app</title><script>navigator.serviceWorker.register('/sw.js')</script>`)
		}))
		return s.URL
	}
	mine, control := site("127.0.0.5", "from-5"), site("127.0.0.6", "from-6")

	srv, tok := endpoint(t)
	h := dialRawTo(t, srv, tok)
	h.must("", "Livetab.setPolicy", map[string]any{"domains": []string{"127.0.0.5"}, "blockPrivate": true})
	h.ws.CloseNow()
	time.Sleep(time.Second)

	p1 := userTab(t, mine+"/app")
	p2 := userTab(t, control+"/app")
	closeUserTab(t, p1)
	closeUserTab(t, p2)
	time.Sleep(5 * time.Second)
	t.Logf("the person's worker of 127.0.0.5 reached 127.0.0.2 %d times; of 127.0.0.6, %d", hits[0].Load(), hits[1].Load())
	if hits[1].Load() == 0 {
		t.Fatalf("the control worker never reached 127.0.0.2: the case shows nothing")
	}
	if hits[0].Load() == 0 {
		t.Errorf("a program that set a policy naming the person's site and left at once holds the person's own service worker off 127.0.0.2 (control: %d requests)", hits[1].Load())
	}
}
