package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// After a navigation the policy blocked, by a URL or by a click on a link
// to another host, the agent keeps its tab: it may snapshot it, go back,
// and load an allowed page in it. On both backends.
func TestMCPBlockedNavigationKeepsTheTab(t *testing.T) {
	var other atomic.Int32
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		other.Add(1)
		fmt.Fprint(w, "elsewhere")
	}))
	elsewhere.Listener.Close()
	elsewhere.Listener = l
	elsewhere.Start()
	t.Cleanup(elsewhere.Close)
	app := newButtonsApp(t, 3)
	app.Config.Handler.(*http.ServeMux).HandleFunc("/link", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<a href="%s/via-link">elsewhere</a>`, elsewhere.URL)
	})
	app.Config.Handler.(*http.ServeMux).HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/via-redirect", http.StatusFound)
	})
	onBothBackends(t, func(t *testing.T, h *home, args []string) {
		c := startMCP(t, h, nil, append(args, "--allow-domain", "127.0.0.1")...)
		c.ok(t, "browser_navigate", map[string]any{"url": app.URL + "/buttons"})
		res := c.call(t, "browser_navigate", map[string]any{"url": elsewhere.URL + "/"})
		if !res.IsError || !strings.Contains(resultText(res), "allow-domain") {
			t.Fatalf("navigating to another host: %s", resultText(res))
		}
		// By a link: the click is allowed, the navigation it starts is
		// not, and the tab stays where it was.
		c.ok(t, "browser_navigate", map[string]any{"url": app.URL + "/link"})
		out, _ := c.ok(t, "browser_click", map[string]any{"selector": "a"})
		if !strings.Contains(out, "navigation was blocked") || !strings.Contains(out, "/via-link\n") {
			t.Errorf("the click: %s", out)
		}
		snap, _ := c.ok(t, "browser_snapshot", nil)
		if !strings.Contains(snap, app.URL+"/link") {
			t.Errorf("the tab left the page with the link:\n%s", snap)
		}
		// By a redirect of an allowed URL.
		res = c.call(t, "browser_navigate", map[string]any{"url": app.URL + "/redirect"})
		if !res.IsError || !strings.Contains(resultText(res), "/via-redirect") {
			t.Errorf("a redirect to another host: %s", resultText(res))
		}
		snap, _ = c.ok(t, "browser_snapshot", nil)
		if !strings.Contains(snap, app.URL+"/link") {
			t.Errorf("after the redirect was blocked:\n%s", snap)
		}
		out, _ = c.ok(t, "browser_navigate", map[string]any{"action": "back"})
		if !strings.Contains(out, "/buttons") {
			t.Errorf("back: %s", out)
		}
		snap, _ = c.ok(t, "browser_snapshot", nil)
		c.ok(t, "browser_click", map[string]any{"index": index(t, snap, `button "Button 2"`)})
		// Blocked again, then an allowed URL in the same tab.
		c.call(t, "browser_navigate", map[string]any{"url": elsewhere.URL + "/again"})
		out, _ = c.ok(t, "browser_navigate", map[string]any{"url": app.URL + "/buttons"})
		if !strings.Contains(out, "/buttons") {
			t.Errorf("navigate after a block: %s", out)
		}
		tabs, _ := c.ok(t, "browser_tabs", map[string]any{"action": "list"})
		if strings.Count(tabs, app.URL) != 1 {
			t.Errorf("tabs: %s", tabs)
		}
		if n := other.Load(); n != 0 {
			t.Errorf("%d requests reached the other host", n)
		}
	})
	if got := app.clicks(); len(got) != 2 {
		t.Errorf("the server saw clicks %q, want one per backend", got)
	}
}
