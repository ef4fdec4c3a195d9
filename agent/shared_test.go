package agent

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/livetab/livetab/internal/browsertest"
	"github.com/livetab/livetab/policy"
)

// The agent sees and touches only the tabs it opened and the tabs the
// person shared in the extension's popup; when the person stops sharing,
// the agent stops too. The server runs in this process, so that the test
// can act as the person on the browser's own debugging port.
func TestSharedTabs(t *testing.T) {
	env := browsertest.Start(t, browsertest.Options{DebugPort: true})
	st := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>Studio</title><label>Prompt <input id="prompt"></label>`)
	}))
	t.Cleanup(st.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	pol := &policy.Policy{AllowDomains: []string{"127.0.0.1"}}
	s, err := New(Options{Browser: env.Allocator(t), Policy: pol, EmulateViewport: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	ct, stt := mcp.NewInMemoryTransports()
	if _, err := s.MCPServer().Connect(ctx, stt, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "livetab-test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	c := &client{cs}

	u, err := env.User(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	id, err := u.OpenTab(ctx, st.URL+"/app")
	if err != nil {
		t.Fatal(err)
	}
	tabOrigin := func() (origin string, attached bool) {
		t.Helper()
		_, res := c.ok(t, "browser_tabs", map[string]any{"action": "list"})
		var tabs struct {
			Tabs []struct {
				ID       string `json:"id"`
				URL      string `json:"url"`
				Origin   string `json:"origin"`
				Attached bool   `json:"attached"`
			} `json:"tabs"`
		}
		structured(t, res, &tabs)
		for _, tb := range tabs.Tabs {
			if tb.ID == id || strings.HasSuffix(tb.URL, "/app") && tb.Origin == "shared" {
				return tb.Origin, tb.Attached
			}
		}
		return "", false
	}

	// Not shared: not listed, and switching to it is refused.
	if origin, _ := tabOrigin(); origin != "" {
		t.Fatalf("the person's tab is listed before they shared it (%s)", origin)
	}
	text := c.denied(t, policy.RuleSharedTabs, "browser_tabs", map[string]any{"action": "switch", "tab": id})
	if !strings.Contains(text, "popup") {
		t.Errorf("the denial does not say how to share: %s", text)
	}

	// The person shares it in the popup.
	var tabID int64
	for _, ts := range env.Relay.Status().Tabs {
		if ts.TargetID == id {
			tabID = ts.TabID
		}
	}
	if tabID == 0 {
		t.Fatalf("the relay does not know tab %s", id)
	}
	if err := u.ShareTab(ctx, tabID, true); err != nil {
		t.Fatalf("sharing the tab in the popup: %v", err)
	}
	if origin, attached := tabOrigin(); origin != "shared" || attached {
		t.Fatalf("the shared tab is listed as %q (attached %v)", origin, attached)
	}
	c.ok(t, "browser_tabs", map[string]any{"action": "switch", "tab": id})
	snap, _ := c.ok(t, "browser_snapshot", nil)
	c.ok(t, "browser_type", map[string]any{"index": index(t, snap, `textbox "Prompt"`), "text": "owl"})

	// The person stops sharing: the agent may no longer touch it.
	if err := u.ShareTab(ctx, tabID, false); err != nil {
		t.Fatalf("unsharing the tab in the popup: %v", err)
	}
	// The Go policy refuses it, unless the extension (which enforces the
	// sharing too) has let go of the tab first.
	res := c.call(t, "browser_snapshot", nil)
	if text := resultText(res); !res.IsError || !strings.Contains(text, "[rule shared-tabs]") && !strings.Contains(text, "stopped sharing") {
		t.Fatalf("a snapshot of the unshared tab: %s", text)
	}
	if origin, _ := tabOrigin(); origin != "" {
		t.Errorf("the unshared tab is still listed (%s)", origin)
	}
	// Closing it only lets go of it: the person's tab stays open.
	c.ok(t, "browser_tabs", map[string]any{"action": "switch", "tab": "1"})
	targets, err := u.Targets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	open := false
	for _, tg := range targets {
		open = open || tg.TargetID == id
	}
	if !open {
		t.Error("the person's tab was closed")
	}
}

// client calls the tools as an MCP client's model would.
type client struct{ *mcp.ClientSession }

// call calls a tool and returns its result; a protocol error fails the
// test.
func (c *client) call(t *testing.T, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// ok calls a tool that must succeed and returns its text.
func (c *client) ok(t *testing.T, name string, args map[string]any) (string, *mcp.CallToolResult) {
	t.Helper()
	res := c.call(t, name, args)
	text := resultText(res)
	if res.IsError {
		t.Fatalf("%s %v: %s", name, args, text)
	}
	return text, res
}

// denied calls a tool that the policy must refuse by rule.
func (c *client) denied(t *testing.T, rule, name string, args map[string]any) string {
	t.Helper()
	res := c.call(t, name, args)
	text := resultText(res)
	if !res.IsError || !strings.Contains(text, "denied by livetab's policy [rule "+rule+"]") {
		t.Fatalf("%s %v: want a denial by rule %s, got %s", name, args, rule, text)
	}
	return text
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// index finds the index of the element on a snapshot line.
func index(t *testing.T, snapshot, line string) int {
	t.Helper()
	i := strings.Index(snapshot, line)
	if i < 0 {
		t.Fatalf("no %s in the snapshot:\n%s", line, snapshot)
	}
	head := snapshot[:i]
	n, err := strconv.Atoi(head[strings.LastIndex(head, "[")+1 : strings.LastIndex(head, "]")])
	if err != nil {
		t.Fatalf("no index before %s: %v", line, err)
	}
	return n
}

func structured(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	b, err := jsonv2.Marshal(res.StructuredContent)
	if err == nil {
		err = jsonv2.Unmarshal(b, v)
	}
	if err != nil {
		t.Fatalf("structured content %v: %v", res.StructuredContent, err)
	}
}
