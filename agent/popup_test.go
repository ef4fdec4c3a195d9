package agent

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/livetab/livetab/internal/browsertest"
	"github.com/livetab/livetab/policy"
)

// The person sees in the extension's popup which agent drives which tab,
// each tool it called and the policy's decision on it.
func TestToolCallsShowInThePopup(t *testing.T) {
	env := browsertest.Start(t, browsertest.Options{DebugPort: true})
	st := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>Studio</title><p>hello</p>`)
	}))
	t.Cleanup(st.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := New(Options{Browser: env.Allocator(t), Policy: &policy.Policy{AllowDomains: []string{"127.0.0.1"}}, EmulateViewport: true, ClientName: "livetab mcp"})
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
	c.ok(t, "browser_navigate", map[string]any{"url": st.URL + "/app"})
	c.denied(t, policy.RuleDomain, "browser_navigate", map[string]any{"url": "http://example.com/"})

	u, err := env.User(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	popup, err := u.OpenPopup(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := u.WaitPopup(ctx, popup, `(() => {
		const now = document.getElementById('now').textContent, recent = document.getElementById('recent').textContent;
		return now.includes('livetab mcp') && now.includes('Studio') &&
			recent.includes('livetab mcp: browser_navigate on “Studio” — allowed') &&
			recent.includes('livetab mcp: browser_navigate on “Studio” — denied');
	})()`); err != nil {
		t.Fatal(err)
	}
}
