package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/livetab/livetab/policy"
)

// In --read-only mode the agent opens no tab, not even a blank one, and
// cannot save bytes of its own making through a data: URL.
func TestMCPReadOnly(t *testing.T) {
	s := needShared(t)
	c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1", "--read-only", "--download-dir", filepath.Join(s.home.dir, "ro-downloads"))
	text := c.denied(t, policy.RuleReadOnly, "browser_tabs", map[string]any{"action": "open"})
	if !strings.Contains(text, "opening a tab") {
		t.Errorf("open a blank tab: %s", text)
	}
	c.denied(t, policy.RuleReadOnly, "browser_tabs", map[string]any{"action": "open", "url": "http://127.0.0.1:1/"})
	text = c.denied(t, policy.RuleReadOnly, "browser_capture", map[string]any{"url": "data:text/plain,planted", "name": "planted.txt"})
	if !strings.Contains(text, "data: URL") {
		t.Errorf("capture a data: URL: %s", text)
	}
	if text, _ := c.ok(t, "browser_tabs", map[string]any{"action": "list"}); !strings.Contains(text, "1 tab(s)") {
		t.Errorf("tabs after the refusals:\n%s", text)
	}
}
