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

// widgetsPage has a button in an open shadow root and one in an iframe.
const (
	widgetsPage = `<!doctype html><html><head><meta charset="utf-8"><title>Widgets</title></head><body>
<h1>Widgets</h1><div id="host"></div><iframe src="/settings" title="Settings frame"></iframe>
<script>const r = host.attachShadow({ mode: 'open' }); r.innerHTML = '<button>Save draft</button>';
r.querySelector('button').onclick = () => fetch('/hit?what=shadow', {method: 'POST'});</script></body></html>`
	settingsPage = `<!doctype html><html><head><meta charset="utf-8"><title>Settings</title></head><body>
<button onclick="fetch('/hit?what=frame', {method: 'POST'})">Apply settings</button></body></html>`
)

// browser_find searches frames and shadow roots too, by text or by role
// and name, and its indexes are clicked at once: the
// server hears the button in the frame and the one in the shadow root.
func TestMCPFindInFramesAndShadow(t *testing.T) {
	onServe(t, func(t *testing.T, h *home, args []string) {
		var mu sync.Mutex
		var hits []string
		mux := http.NewServeMux()
		mux.HandleFunc("/widgets", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, widgetsPage) })
		mux.HandleFunc("/settings", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, settingsPage) })
		mux.HandleFunc("POST /hit", func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			hits = append(hits, r.URL.Query().Get("what"))
			mu.Unlock()
		})
		app := httptest.NewServer(mux)
		t.Cleanup(app.Close)
		c := startMCP(t, h, nil, append(args, "--allow-domain", "127.0.0.1")...)
		c.ok(t, "browser_navigate", map[string]any{"url": app.URL + "/widgets"})
		found, _ := c.ok(t, "browser_find", map[string]any{"text": "apply"})
		if !strings.Contains(found, `button "Apply settings" frame=`) || strings.Contains(found, "Save draft") {
			t.Fatalf("find apply:\n%s", found)
		}
		c.ok(t, "browser_click", map[string]any{"index": index(t, found, `button "Apply settings"`)})
		found, _ = c.ok(t, "browser_find", map[string]any{"role": "button", "name": "save draft"})
		if strings.Contains(found, "Apply settings") {
			t.Fatalf("find save draft:\n%s", found)
		}
		c.ok(t, "browser_click", map[string]any{"index": index(t, found, `button "Save draft"`)})
		mu.Lock()
		got := strings.Join(hits, ",")
		mu.Unlock()
		if got != "frame,shadow" {
			t.Errorf("the server heard %q, want frame,shadow", got)
		}
	})
}
