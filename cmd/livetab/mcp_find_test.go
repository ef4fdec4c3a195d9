package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// buttonsApp serves a page of n buttons; a click on one posts its number,
// which the server records.
type buttonsApp struct {
	*httptest.Server
	mu      sync.Mutex
	clicked []string
}

func newButtonsApp(t *testing.T, n int) *buttonsApp {
	a := &buttonsApp{}
	mux := http.NewServeMux()
	mux.HandleFunc("/buttons", func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		b.WriteString(`<!doctype html><html><head><meta charset="utf-8"><title>Buttons</title></head><body>`)
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, `<div><button onclick="fetch('/click?b=%d', {method: 'POST'})">Button %d</button></div>`, i, i)
		}
		b.WriteString(`</body></html>`)
		fmt.Fprint(w, b.String())
	})
	mux.HandleFunc("POST /click", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.clicked = append(a.clicked, r.URL.Query().Get("b"))
		a.mu.Unlock()
	})
	a.Server = httptest.NewServer(mux)
	t.Cleanup(a.Close)
	return a
}

func (a *buttonsApp) clicks() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.clicked...)
}

// One button among 2,000 through `livetab mcp`: browser_find lists it in
// one call, with an index browser_click takes at once.
func TestMCPFind(t *testing.T) {
	s := needShared(t)
	app := newButtonsApp(t, 2000)
	c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1")
	c.ok(t, "browser_navigate", map[string]any{"url": app.URL + "/buttons"})
	text, _ := c.ok(t, "browser_find", map[string]any{"text": "button 1537"})
	if !strings.Contains(text, "1 of 2000 interactive elements match") {
		t.Fatalf("find:\n%s", text)
	}
	i := index(t, text, `button "Button 1537"`)
	if out, _ := c.ok(t, "browser_click", map[string]any{"index": i}); !strings.Contains(out, `button "Button 1537"`) {
		t.Errorf("click: %s", out)
	}
	c.ok(t, "browser_wait", map[string]any{"network_idle": true})
	if got := app.clicks(); len(got) != 1 || got[0] != "1537" {
		t.Errorf("the server saw clicks on %q, want 1537", got)
	}
	res := c.call(t, "browser_find", map[string]any{})
	if !res.IsError || !strings.Contains(resultText(res), "give text, role or name") {
		t.Errorf("find without criteria: %s", resultText(res))
	}
}
