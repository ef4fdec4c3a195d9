package extcdp_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/livetab/livetab/livetabcdp"
)

// forbiddenServer is a loopback server on 127.0.0.2 that records the paths
// it was asked for.
func forbiddenServer(t *testing.T) (*httptest.Server, func() []string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var paths []string
	srv := &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Write([]byte("<!doctype html><title>forbidden</title>the router's secret"))
	})}}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), paths...)
	}
}

// A client with a policy intercepts its own tab's requests (Fetch.enable)
// and answers a paused request of an allowed URL with Fetch.continueRequest
// {url} of another host: Chrome sends the request there past the
// extension's rules, which saw the allowed URL, and past the relay's checks
// of Page.navigate. Held to 127.0.0.1 and off private addresses, a client
// read 127.0.0.2's page in its tab and through the page's fetch (red team,
// 7 of 7). Now the rewrite is refused saying why, and the request goes on
// unchanged when the client continues it without url; a rewrite within the
// domains of a client not kept off private addresses still works.
func TestRedTeamFetchRewriteKeepsThePolicy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy map[string]any
	}{
		{"domains-and-private", map[string]any{"domains": []string{"127.0.0.1"}, "blockPrivate": true, "privateAllowed": []string{"127.0.0.1"}}},
		{"domains", map[string]any{"domains": []string{"127.0.0.1"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forbidden, seen := forbiddenServer(t)
			a := dialRaw(t)
			a.must("", livetabcdp.CommandSetPolicy, tc.policy)
			tid, sA := a.open(site.URL + "/form?rewrite")
			t.Cleanup(func() { a.call("", "Target.closeTarget", map[string]any{"targetId": tid}) })
			a.eval(sA, `document.readyState === 'complete' || new Promise(r => onload = r)`)
			a.must(sA, "Fetch.enable", map[string]any{"patterns": []any{map[string]any{"urlPattern": "*rewrite-*"}}})
			// Each paused request is sent to 127.0.0.2, and continued
			// unchanged when that is refused; rewrite-ok goes to the
			// site's own /inner.
			done := make(chan struct{})
			var mu sync.Mutex
			var refused []string
			go func() {
				for {
					select {
					case <-done:
						return
					case ev := <-a.evs:
						if ev.Method != "Fetch.requestPaused" {
							continue
						}
						id := field(ev.Params, "requestId")
						to := forbidden.URL + "/rewritten"
						if strings.Contains(string(ev.Params), "rewrite-ok") {
							to = site.URL + "/inner"
						}
						if _, err := a.call(ev.SessionID, "Fetch.continueRequest", map[string]any{"requestId": id, "url": to}); err != nil {
							mu.Lock()
							refused = append(refused, err.Error())
							mu.Unlock()
							a.call(ev.SessionID, "Fetch.continueRequest", map[string]any{"requestId": id})
						}
					}
				}
			}()
			defer close(done)
			got := a.eval(sA, `fetch('`+site.URL+`/rewrite-fetch').then(r => r.text(), e => 'failed: ' + e)`)
			if strings.Contains(string(got), "router's secret") {
				t.Errorf("the page's fetch read %s: %s", forbidden.URL, got)
			}
			ok := a.eval(sA, `fetch('`+site.URL+`/rewrite-ok').then(r => r.text(), e => 'failed: ' + e)`)
			a.must(sA, "Fetch.enable", map[string]any{"patterns": []any{map[string]any{"urlPattern": "*rewrite-*"}, map[string]any{"urlPattern": "*rewrite-doc*", "resourceType": "Document"}}})
			a.navigate(sA, site.URL+"/rewrite-doc")
			time.Sleep(1500 * time.Millisecond)
			body, _ := a.call(sA, "Runtime.evaluate", map[string]any{"expression": "location.href + ' | ' + document.body.innerText", "returnByValue": true})
			if p := seen(); len(p) > 0 {
				t.Errorf("a client held to 127.0.0.1 reached %s by rewriting its paused requests: %v", forbidden.URL, p)
			}
			if strings.Contains(string(body), "router's secret") {
				t.Errorf("the client read the page of %s in its tab: %s", forbidden.URL, body)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(refused) == 0 || !strings.Contains(refused[0], "Fetch.continueRequest") {
				t.Errorf("the rewrite was not refused saying why: %q", refused)
			}
			if _, private := tc.policy["blockPrivate"]; !private && !strings.Contains(string(ok), "inside the frame") {
				t.Errorf("a rewrite within the domains failed: %s (refused: %q)", ok, refused)
			}
		})
	}
}
