package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Regression of the guard's new response stage and the rules for pages
// fetched ahead: the agent's own legitimate navigations among hosts it
// named must still work: a form POST it submits that answers 303 to a
// page of the same host, a redirect from an allowed host to another named
// private host (c.localhost), reload, and back and forward between them.
func TestLegitNavigationsStillWork(t *testing.T) {
	s := needShared(t)
	var port string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/form":
			fmt.Fprint(w, `<!doctype html><title>form</title><form method="post" action="/post"><input name="q" aria-label="q" value="v"><button>Send</button></form>`)
		case "/post":
			http.Redirect(w, r, "/done", http.StatusSeeOther)
		case "/done":
			fmt.Fprint(w, `<!doctype html><title>done</title><p>posted`)
		case "/hop":
			http.Redirect(w, r, "http://c.localhost:"+port+"/landed", http.StatusFound)
		case "/landed":
			fmt.Fprintf(w, `<!doctype html><title>landed %s</title>`, r.Host)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	_, port, _ = net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	a := "http://a.localhost:" + port
	c := startMCP(t, s.home, nil, "--allow-domain", "a.localhost", "--allow-domain", "c.localhost")
	expect := func(step, res, want string) {
		t.Logf("%s: %s", step, firstLine(res))
		if strings.Contains(res, "Error") || !strings.Contains(res, want) {
			t.Errorf("%s: a legitimate navigation failed (want %q): %s", step, want, firstLine(res))
		}
	}
	c.ok(t, "browser_navigate", map[string]any{"url": a + "/form"})
	expect("form POST 303", resultText(c.call(t, "browser_click", map[string]any{"index": index(t, mustSnap(t, c), `button "Send"`)})), "navigated")
	expect("redirect to named c.localhost", resultText(c.call(t, "browser_navigate", map[string]any{"url": a + "/hop"})), "c.localhost")
	expect("reload", resultText(c.call(t, "browser_navigate", map[string]any{"action": "reload"})), "landed")
	expect("back", resultText(c.call(t, "browser_navigate", map[string]any{"action": "back"})), "/done")
	expect("forward", resultText(c.call(t, "browser_navigate", map[string]any{"action": "forward"})), "c.localhost")
}
