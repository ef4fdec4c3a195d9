package main

import (
	"strings"
	"testing"
	"time"
)

// An agent closes its tabs as Playwright's MCP server lets it: the current
// one when it names none, and its first tab too, once it is the last: the
// page in it stops, and the next call opens a new tab. While other tabs
// are open, the first one stays, and the error says what to do.
func TestMCPClosesItsFirstTabLast(t *testing.T) {
	s := needShared(t)
	site := newRecorder(t, "127.0.0.1", func(path string) string {
		return `<!doctype html><title>ticking</title><script>let n = 0; setInterval(() => fetch('/tick` +
			strings.ReplaceAll(path, "/", "-") + `-' + (n++)).catch(() => {}), 50)</script>`
	})
	c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1")
	c.ok(t, "browser_navigate", map[string]any{"url": site.URL + "/first"})
	first := currentTab(t, c)
	c.ok(t, "browser_tabs", map[string]any{"action": "open", "url": site.URL + "/second"})
	second := currentTab(t, c)

	res := c.call(t, "browser_tabs", map[string]any{"action": "close", "tab": first})
	if text := resultText(res); !res.IsError || !strings.Contains(text, "close tab(s) "+second+" first") {
		t.Errorf("closing the first tab while another is open: %s", text)
	}
	if text, _ := c.ok(t, "browser_tabs", map[string]any{"action": "close"}); !strings.Contains(text, "closed tab "+second) || !strings.Contains(text, "1 tab(s)") {
		t.Errorf("closing the current tab:\n%s", text)
	}
	c.ok(t, "browser_tabs", map[string]any{"action": "switch", "tab": first})
	text, _ := c.ok(t, "browser_tabs", map[string]any{"action": "close", "tab": first})
	if !strings.Contains(text, "closed tab "+first) {
		t.Errorf("closing the last tab: %s", text)
	}
	ticks := func() int {
		n := 0
		for _, p := range site.paths() {
			if strings.HasPrefix(p, "/tick-first-") {
				n++
			}
		}
		return n
	}
	time.Sleep(500 * time.Millisecond)
	before := ticks()
	time.Sleep(time.Second)
	if after := ticks(); after != before {
		t.Errorf("the first tab's page went on after it closed: %d requests, then %d", before, after)
	}
	c.ok(t, "browser_navigate", map[string]any{"url": site.URL + "/again"})
	text, _ = c.ok(t, "browser_tabs", map[string]any{"action": "list"})
	if !strings.Contains(text, "1 tab(s)") || !strings.Contains(text, "/again") || strings.Contains(text, "/first") {
		t.Errorf("the tabs after the last closed and a navigation:\n%s", text)
	}
}
