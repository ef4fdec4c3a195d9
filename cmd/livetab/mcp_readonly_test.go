package main

import (
	"context"
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

// The tools a policy turns off are not listed by `livetab mcp` (read-only:
// none that gives input, navigates or uploads; eval unless allowed; pdf
// without a download directory), and the notes every result relies on are
// in the server's instructions, not in each description.
func TestMCPToolsListedByPolicy(t *testing.T) {
	s := needShared(t)
	names := func(c *mcpClient) map[string]string {
		t.Helper()
		res, err := c.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, tool := range res.Tools {
			out[tool.Name] = tool.Description
		}
		return out
	}
	ro := names(startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1", "--read-only"))
	for _, name := range []string{"browser_navigate", "browser_click", "browser_click_xy", "browser_type", "browser_fill_form", "browser_upload", "browser_resize", "browser_eval", "browser_pdf"} {
		if _, ok := ro[name]; ok {
			t.Errorf("--read-only lists %s", name)
		}
	}
	for _, name := range []string{"browser_snapshot", "browser_find", "browser_read", "browser_console", "browser_network", "browser_storage", "browser_tabs"} {
		if _, ok := ro[name]; !ok {
			t.Errorf("--read-only does not list %s", name)
		}
	}
	c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1")
	def := names(c)
	if _, ok := def["browser_eval"]; ok {
		t.Error("browser_eval is listed without --allow-eval")
	}
	if _, ok := names(startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1", "--allow-eval"))["browser_eval"]; !ok {
		t.Error("browser_eval is not listed with --allow-eval")
	}
	ins := c.InitializeResult().Instructions
	for _, note := range []string{"</page id=…>", `"settled in 80ms"`, "reconnecting or disconnected"} {
		if !strings.Contains(ins, note) {
			t.Errorf("the instructions lack %q:\n%s", note, ins)
		}
		for name, d := range def {
			if strings.Contains(d, note) {
				t.Errorf("%s repeats %q: %s", name, note, d)
			}
		}
	}
}
