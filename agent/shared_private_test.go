package agent

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/livetab/livetab/internal/browsertest"
	"github.com/livetab/livetab/internal/testsite"
	"github.com/livetab/livetab/policy"
)

// The person's own tab keeps asking another loopback address every 50 ms
// (their router's page, say). While an agent without private networks
// drives it, none of those requests leaves; once the person stops sharing
// it, or the agent ends, the tab's requests go out again: the agent's
// rules never outlive its hold on the tab and never break the person's tab.
func TestRedTeamSharedTabHeldOffPrivateAddressesOnlyWhileDriven(t *testing.T) {
	env := browsertest.Start(t, browsertest.Options{DebugPort: true})
	private := testsite.NewCounter(t, "127.0.0.2", "")
	hits := &private.Hits
	st := testsite.NewCounter(t, "127.0.0.1", fmt.Sprintf(`<!doctype html><title>Router</title><script>setInterval(() => fetch('%s/tick', {mode: 'no-cors'}).catch(() => {}), 50)</script>`, private.URL))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	u, err := env.User(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	id, err := u.OpenTab(ctx, st.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	// asks says whether the tab asks the private address within 3 s.
	asks := func() bool {
		n := hits.Load()
		for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			if hits.Load() > n {
				return true
			}
		}
		return false
	}
	// held says how many requests left in the second after a moment's grace
	// for one already on its way.
	held := func() int64 {
		time.Sleep(100 * time.Millisecond)
		n := hits.Load()
		time.Sleep(time.Second)
		return hits.Load() - n
	}
	if !asks() {
		t.Fatal("the person's tab never asked the private address: the page does not work")
	}

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
	cs := connect(t, s)
	c := &client{cs}
	c.ok(t, "browser_tabs", map[string]any{"action": "list"})
	// An agent that does not drive it leaves the person's tab alone.
	if !asks() {
		t.Error("the person's tab, not shared, lost its private requests to an agent that does not drive it")
	}

	var tabID int64
	for _, ts := range env.Relay.Status().Tabs {
		if ts.TargetID == id {
			tabID = ts.TabID
		}
	}
	if tabID == 0 {
		t.Fatalf("the relay does not know tab %s", id)
	}
	for round := 1; round <= 2; round++ {
		if err := u.ShareTab(ctx, tabID, true); err != nil {
			t.Fatalf("sharing the tab in the popup: %v", err)
		}
		c.ok(t, "browser_tabs", map[string]any{"action": "switch", "tab": id})
		if n := held(); n > 0 {
			t.Errorf("round %d: the tab the agent drives asked the private address %d times in a second", round, n)
		}
		if round == 1 {
			if err := u.ShareTab(ctx, tabID, false); err != nil {
				t.Fatalf("unsharing the tab in the popup: %v", err)
			}
			if !asks() {
				t.Error("the person stopped sharing the tab: it still cannot ask its private address")
			}
		}
	}
	// The agent ends: the tab is the person's alone again.
	cs.Close()
	s.Close()
	closed = true
	if !asks() {
		t.Error("the agent ended: the person's tab still cannot ask its private address")
	}
}
