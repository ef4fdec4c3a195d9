package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
)

const devtoolsPage = `<!doctype html><html><head><meta charset="utf-8"><title>Dev Tools Page</title></head><body>
<button id="xy" style="position: fixed; left: 10px; top: 10px; width: 100px; height: 40px"
  onclick="fetch('/xy', {method: 'POST'})">Here</button>
<button style="margin-top: 100px" onclick="fetch('/scheme?dark=' + matchMedia('(prefers-color-scheme: dark)').matches, {method: 'POST'})">Scheme</button>
<script>
console.log('hello', 42);
console.error('bad thing');
setTimeout(() => { throw new Error('boom'); }, 0);
localStorage.setItem('draft', 'first words');
document.cookie = 'theme=dark';
fetch('/api', {method: 'POST', body: JSON.stringify({q: 'question'})});
</script>
</body></html>`

// The console, network, storage, PDF, viewport and click-at-a-point tools
// through livetab mcp, each call in the audit log.
func TestMCPDevtools(t *testing.T) {
	var xy atomic.Int32
	var posted atomic.Value
	mux := http.NewServeMux()
	mux.HandleFunc("/dev", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: "SECRET-SESSION", HttpOnly: true, Path: "/"})
		fmt.Fprint(w, devtoolsPage)
	})
	mux.HandleFunc("POST /api", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		posted.Store(string(b))
		w.Header().Set("X-Test", "yes")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"answer": "forty-two"}`)
	})
	mux.HandleFunc("POST /xy", func(w http.ResponseWriter, r *http.Request) { xy.Add(1) })
	var scheme atomic.Value // "true"/"false": whether the page last said it is in dark mode
	mux.HandleFunc("POST /scheme", func(w http.ResponseWriter, r *http.Request) { scheme.Store(r.URL.Query().Get("dark")) })
	app := httptest.NewServer(mux)
	t.Cleanup(app.Close)
	onServe(t, func(t *testing.T, h *home, args []string) {
		dir := t.TempDir()
		audit := filepath.Join(dir, "audit.jsonl")
		dl := filepath.Join(dir, "dl")
		c := startMCP(t, h, nil, append(args, "--allow-domain", "127.0.0.1", "--download-dir", dl, "--audit", audit)...)
		xy0 := xy.Load()
		c.ok(t, "browser_navigate", map[string]any{"url": app.URL + "/dev"})

		out, _ := c.ok(t, "browser_console", map[string]any{})
		for _, want := range []string{"[log] hello 42", "[error] bad thing", "uncaught: Error: boom"} {
			if !strings.Contains(out, want) {
				t.Errorf("console lacks %q:\n%s", want, out)
			}
		}
		if out, _ := c.ok(t, "browser_console", map[string]any{"level": "error"}); strings.Contains(out, "hello") {
			t.Errorf("errors only:\n%s", out)
		}

		out, _ = c.ok(t, "browser_network", map[string]any{"filter": "/api"})
		m := regexp.MustCompile(`(?m)^(\S+) POST \S+/api 200`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("network list:\n%s", out)
		}
		out, _ = c.ok(t, "browser_network", map[string]any{"request_id": m[1]})
		for _, want := range []string{`{"q":"question"}`, `{"answer": "forty-two"}`, "X-Test: yes"} {
			if !strings.Contains(out, want) {
				t.Errorf("request %s lacks %q:\n%s", m[1], want, out)
			}
		}
		if got, _ := posted.Load().(string); got != `{"q":"question"}` {
			t.Errorf("the server got %q", got)
		}
		out, _ = c.ok(t, "browser_network", map[string]any{"filter": "/dev"})
		m = regexp.MustCompile(`(?m)^(\S+) GET \S+/dev 200`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("network list:\n%s", out)
		}
		if out, _ = c.ok(t, "browser_network", map[string]any{"request_id": m[1]}); strings.Contains(out, "SECRET-SESSION") {
			t.Errorf("the session cookie reached the model:\n%s", out)
		}

		out, _ = c.ok(t, "browser_storage", map[string]any{})
		for _, want := range []string{"theme=dark", "sid=(httpOnly: withheld)", "draft = first words"} {
			if !strings.Contains(out, want) {
				t.Errorf("storage lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "SECRET-SESSION") {
			t.Errorf("the session cookie reached the model:\n%s", out)
		}

		out, _ = c.ok(t, "browser_click_xy", map[string]any{"x": 50, "y": 30})
		if !strings.Contains(out, `clicked at 50,30 on button "Here"`) {
			t.Errorf("click_xy: %s", out)
		}
		if n := xy.Load() - xy0; n != 1 {
			t.Errorf("the server saw %d clicks, want 1", n)
		}

		c.ok(t, "browser_resize", map[string]any{"width": 400, "height": 700, "color_scheme": "dark"})
		snap, _ := c.ok(t, "browser_snapshot", nil)
		if !strings.Contains(snap, "viewport 400x700") {
			t.Errorf("after resize:\n%s", snap)
		}
		// The page says which scheme it is in when its button is clicked
		// (the click settles once its request was answered).
		c.ok(t, "browser_click", map[string]any{"index": index(t, snap, `button "Scheme"`)})
		if got, _ := scheme.Load().(string); got != "true" {
			t.Errorf("the page is in dark mode: %q, want true", got)
		}
		c.ok(t, "browser_resize", map[string]any{"reset": true})
		snap, _ = c.ok(t, "browser_snapshot", nil)
		c.ok(t, "browser_click", map[string]any{"index": index(t, snap, `button "Scheme"`)})
		if got, _ := scheme.Load().(string); got != "false" {
			t.Errorf("after the reset the page is in dark mode: %q, want false", got)
		}

		out, _ = c.ok(t, "browser_pdf", map[string]any{})
		pdf := filepath.Join(dl, "Dev Tools Page.pdf")
		if !strings.Contains(out, "path: "+pdf+"\n") {
			t.Errorf("pdf: %s", out)
		}
		if b, err := os.ReadFile(pdf); err != nil || !strings.HasPrefix(string(b), "%PDF") {
			t.Errorf("%s: %.10q %v", pdf, b, err)
		}

		b, err := os.ReadFile(audit)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range []string{"browser_console", "browser_network", "browser_storage", "browser_click_xy", "browser_resize", "browser_pdf"} {
			if !strings.Contains(string(b), `"`+tool+`"`) {
				t.Errorf("the audit log has no %s", tool)
			}
		}
	})
}
