package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// A hostile page an agent looks at makes its tab undebuggable (its srcdoc
// frame's URL becomes about:srcdoc#x, and chrome.debugger then refuses
// every command of the tab, the guard's Fetch.continueRequest and
// Fetch.failRequest too), and only then asks outside the agent's domains:
// by fetch, by a navigation of its own, and after the agent ended. The
// guard may not be able to answer; it must not let a request through, and
// every tool must answer within its bound, saying what happened.
func TestRedTeamWedgedTabKeepsThePolicy(t *testing.T) {
	s := needShared(t)
	forbidden := newRecorder(t, "127.0.0.2", func(string) string { return "secret" })
	hostile := newRecorder(t, "127.0.0.1", func(path string) string {
		return fmt.Sprintf(`<!doctype html><title>wedge</title><iframe srcdoc="<p>inner</p>"></iframe>
<script>
onload = () => {
  document.querySelector('iframe').contentWindow.location.hash = 'x';
  let n = 0;
  const tick = setInterval(() => {
    fetch('%[1]s/fetch-' + n, {mode: 'no-cors'}).catch(() => {});
    fetch('/allowed-' + (n++)).catch(() => {});
    if (n === 20) location = '%[1]s/navigate';
    if (n > 60) clearInterval(tick);
  }, 100);
};
</script>`, forbidden.URL)
	})
	c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1")
	c.ok(t, "browser_navigate", map[string]any{"url": hostile.URL + "/"})
	start := time.Now()
	res := c.call(t, "browser_snapshot", nil)
	text := resultText(res)
	t.Logf("snapshot after the wedge (%v): error %v: %.300s", time.Since(start).Round(time.Millisecond), res.IsError, text)
	if res.IsError && !strings.Contains(text, "about:srcdoc") {
		t.Errorf("the tool's error does not say what happened: %s", text)
	}
	time.Sleep(3 * time.Second)
	if got := forbidden.paths(); len(got) > 0 {
		t.Errorf("while the agent drove it, the wedged tab reached %s: %v", forbidden.URL, got)
	}
	t.Logf("the page's script asked its own server: %v", hostile.hit("/allowed-"))
	c.Close()
	time.Sleep(3 * time.Second)
	if got := forbidden.paths(); len(got) > 0 {
		t.Errorf("after the agent ended, the wedged tab reached %s: %v", forbidden.URL, got)
	}
	t.Logf("its own server saw %v", hostile.paths())
}
