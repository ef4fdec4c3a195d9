package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/livetab/livetab/agent"
	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/internal/browsertest"
	"github.com/livetab/livetab/policy"
)

// The agent sees and touches only the tabs it opened and the tabs the
// person shared in the extension's popup; when the person stops sharing,
// the agent stops too. The server runs in this process, so that the test
// can act as the person on the browser's own debugging port.
func TestMCPSharedTabs(t *testing.T) {
	env := browsertest.Start(t, browsertest.Options{DebugPort: true})
	st := newStudio(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	pol := &policy.Policy{AllowDomains: []string{"127.0.0.1"}}
	s, err := agent.New(agent.Options{Browser: env.Allocator(t), Policy: pol, EmulateViewport: true})
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
	c := &mcpClient{ClientSession: cs, stderr: &lockedBuffer{}}

	u, err := env.User(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	id, err := u.OpenTab(ctx, st.URL+"/app")
	if err != nil {
		t.Fatal(err)
	}
	listed := func() (origin string, attached bool) {
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
	if origin, _ := listed(); origin != "" {
		t.Fatalf("the person's tab is listed before they shared it (%s)", origin)
	}
	text := c.denied(t, policy.RuleSharedTabs, "browser_tabs", map[string]any{"action": "switch", "tab": id})
	if !strings.Contains(text, "popup") {
		t.Errorf("the denial does not say how to share: %s", text)
	}

	// The person shares it in the popup.
	var tabID int64
	for _, ts := range extcdp.RelayFor(env.Bridge).Status().Tabs {
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
	if origin, attached := listed(); origin != "shared" || attached {
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
	if origin, _ := listed(); origin != "" {
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
