package main

import (
	"testing"
	"time"
)

// A hostile page on the allowed host opens a popup of the same host when
// the agent clicks, and the popup sends its opener — the agent's tab — to
// another loopback address, or itself, or both through a form aimed at the
// opener's name. None of those documents may load.
func TestRedTeamPopupSendsItsOpenerAway(t *testing.T) {
	s := needShared(t)
	forbidden := newRecorder(t, "127.0.0.2", func(string) string { return "<title>forbidden</title>secret" })
	F := forbidden.URL
	hostile := newRecorder(t, "127.0.0.1", func(path string) string {
		switch path {
		case "/start":
			return `<!doctype html><title>start</title><script>window.name = 'main'</script>
<button id="b" onclick="window.open('/pop', 'pop')">Open</button>`
		case "/pop":
			return `<!doctype html><title>pop</title><script>
setTimeout(() => { opener.location = '` + F + `/opener' }, 50);
setTimeout(() => { window.open('` + F + `/named', 'main') }, 100);
setTimeout(() => { opener.opener = null; location = '` + F + `/self' }, 150);
</script>`
		}
		return "<title>other</title>"
	})
	c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1")
	c.ok(t, "browser_navigate", map[string]any{"url": hostile.URL + "/start"})
	text, _ := c.ok(t, "browser_click", map[string]any{"selector": "#b"})
	t.Logf("click: %s", text)
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) && !hostile.hit("/pop") {
		time.Sleep(100 * time.Millisecond)
	}
	if !hostile.hit("/pop") {
		t.Fatal("the popup never loaded: the attack does not run")
	}
	time.Sleep(2 * time.Second)
	if p := forbidden.paths(); len(p) > 0 {
		t.Errorf("the popup reached the forbidden address: %v", p)
	}
	tabs, _ := c.ok(t, "browser_tabs", map[string]any{"action": "list"})
	t.Logf("tabs: %s", tabs)
}
