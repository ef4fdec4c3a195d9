package agent

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/livetab/livetab/internal/browsertest"
	"github.com/livetab/livetab/policy"
)

// The person shares one tab; while the agent works in it, the person opens
// a window from that tab (a compose window of their mail, with a token in
// its URL). That window is the person's, not shared: the agent must not
// list it, read it, or close it, neither when asked to close its tabs nor
// when it ends.
func TestRedTeamPopupOfASharedTabStaysThePersons(t *testing.T) {
	env := browsertest.Start(t, browsertest.Options{DebugPort: true})
	st := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/compose" {
			fmt.Fprint(w, `<!doctype html><title>Compose TOKEN-SHARED-POPUP</title><p>draft body TOKEN-SHARED-POPUP</p>`)
			return
		}
		fmt.Fprint(w, `<!doctype html><title>Mail</title><label>Search <input id="q"></label>`)
	}))
	t.Cleanup(st.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	pol := &policy.Policy{AllowDomains: []string{"127.0.0.1"}}
	s, err := New(Options{Browser: env.Allocator(t), Policy: pol, EmulateViewport: true})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			s.Close()
		}
	})
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
	c.ok(t, "browser_tabs", map[string]any{"action": "list"})
	var tabID int64
	for _, ts := range env.Relay.Status().Tabs {
		if ts.TargetID == id {
			tabID = ts.TabID
		}
	}
	if err := u.ShareTab(ctx, tabID, true); err != nil {
		t.Fatalf("sharing the tab: %v", err)
	}
	c.ok(t, "browser_tabs", map[string]any{"action": "switch", "tab": id})
	c.ok(t, "browser_snapshot", nil)

	// The person opens a window from the shared tab, with a click (a user
	// gesture) of their own.
	popup, err := u.OpenWindow(ctx, id, st.URL+"/compose?token=TOKEN-SHARED-POPUP")
	if err != nil {
		t.Fatalf("the person's window: %v", err)
	}
	time.Sleep(time.Second)

	list, _ := c.ok(t, "browser_tabs", map[string]any{"action": "list"})
	if strings.Contains(list, "TOKEN-SHARED-POPUP") || strings.Contains(list, "/compose") {
		t.Errorf("the agent's tab list shows the person's unshared window:\n%s", list)
	}
	// The agent tries to switch to it and read it.
	sw := c.call(t, "browser_tabs", map[string]any{"action": "switch", "tab": popup})
	t.Logf("switch: %v %s", sw.IsError, resultText(sw))
	if !sw.IsError {
		rd := resultText(c.call(t, "browser_read", nil))
		if strings.Contains(rd, "draft body") {
			t.Errorf("the agent read the body of the person's unshared window:\n%s", rd)
		}
		snap := resultText(c.call(t, "browser_snapshot", nil))
		if strings.Contains(snap, "TOKEN-SHARED-POPUP") {
			t.Errorf("the agent read the person's unshared window (switch said %q):\n%s", resultText(sw), snap)
		}
	}
	// The agent closes what it lists as its own, then ends.
	c.call(t, "browser_tabs", map[string]any{"action": "close", "tab": popup})
	s.Close()
	closed = true
	time.Sleep(2 * time.Second)
	targets, err := u.Targets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	open := false
	for _, tg := range targets {
		open = open || tg.TargetID == popup
	}
	if !open {
		t.Errorf("the person's window %s was closed by the agent", popup)
	}
}
