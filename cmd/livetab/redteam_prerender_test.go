package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// An agent allowed a.localhost with --allow-private-networks (so only the
// domain rules hold its documents, not the private-address ones). A hostile
// page of a.localhost has Chrome prerender a page of b.localhost (same
// site, outside the domains; the page opts in with Supports-Loading-Mode),
// then sets location to it: Chrome activates the prerendered page, which
// commits with no request at all, so neither the extension's rules on
// main-frame loads nor the page guard's Fetch sees a load to refuse. The
// agent then reads the tab. Nothing of b.localhost may show in what the
// agent reads, and its document should not be requested. Measured: it is
// Chrome's prefetch ahead of a prerender (Sec-Purpose: prefetch;prerender),
// a main-frame request no page of the domains started, which Fetch never
// sees; the navigation then takes its response (4 of 4 runs before the
// extension's aheadRules held such requests to the domains).
func TestRedTeamPrerenderActivationOutsideTheDomains(t *testing.T) {
	s := needShared(t)
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.Host)
		mu.Lock()
		hits[host+r.URL.Path]++
		if r.URL.Path == "/alive" {
			hits[host+r.URL.Path+"?"+r.URL.RawQuery]++
		}
		mu.Unlock()
		_, port, _ := net.SplitHostPort(r.Host)
		other := "http://b.localhost:" + port + "/secret?h=" + r.URL.Query().Get("h")
		w.Header().Set("Content-Type", "text/html")
		switch host {
		case "a.localhost":
			if r.URL.Path == "/favicon.ico" {
				http.NotFound(w, r)
				return
			}
			fmt.Fprintf(w, `<!doctype html><title>hostile</title><p>welcome</p>
<script type="speculationrules">{"prerender": [{"source": "list", "urls": [%q], "eagerness": "immediate"}]}</script>
<script>setTimeout(() => { location.href = %q }, %s)</script>`, other, other, r.URL.Query().Get("after"))
		case "b.localhost":
			if r.URL.Path == "/alive" {
				return
			}
			if r.URL.Query().Get("h") == "1" {
				w.Header().Set("Supports-Loading-Mode", "credentialed-prerender")
			}
			fmt.Fprint(w, `<!doctype html><title>BANKTITLE</title><p>BANKSECRET balance 1234</p><button>Transfer</button><script>setInterval(() => fetch('/alive?' + (document.prerendering ? 'pre' : 'live')), 500)</script>`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	c := startMCP(t, s.home, nil, "--allow-domain", "a.localhost", "--allow-private-networks")

	h := "1"
	if testing.Short() {
		h = "0"
	}
	res := resultText(c.call(t, "browser_navigate", map[string]any{"url": "http://a.localhost:" + port + "/?after=2500&h=" + h}))
	t.Logf("navigate: %s", firstLine(res))
	if !strings.Contains(res, "navigated") {
		t.Fatalf("the agent's navigation to a.localhost did not load: %s", res)
	}
	time.Sleep(4 * time.Second)
	var leaked []string
	for _, tool := range []string{"browser_snapshot", "browser_read", "browser_tabs", "browser_screenshot"} {
		args := map[string]any{}
		if tool == "browser_tabs" {
			args["action"] = "list"
		}
		r := c.call(t, tool, args)
		text := resultText(r)
		t.Logf("%s: %s", tool, firstLine(text))
		if strings.Contains(text, "BANKSECRET") || strings.Contains(text, "BANKTITLE") || strings.Contains(text, "Transfer") {
			leaked = append(leaked, tool)
		}
	}
	time.Sleep(2 * time.Second)
	mu.Lock()
	t.Logf("server saw %v", hits)
	bhits := hits["b.localhost/secret"]
	mu.Unlock()
	if bhits > 0 {
		t.Errorf("a document of b.localhost, outside the domains, was requested %d time(s) for the agent's tab", bhits)
	}
	if len(leaked) > 0 {
		t.Errorf("the agent read the page of b.localhost, outside its domains, through %v", leaked)
	}
}
