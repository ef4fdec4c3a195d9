package extcdp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/livetabcdp"
)

func setPolicy(t *testing.T, ctx context.Context, p livetabcdp.SetPolicyParams) {
	t.Helper()
	if _, err := chromedp.CallBrowser(ctx, livetabcdp.SetPolicy, p); err != nil {
		t.Fatal(err)
	}
}

// tabEntry reads a tab's entry in Livetab.getTabs: whether the person shared
// it, and whether the client is told of it at all.
func tabEntry(t *testing.T, ctx context.Context, id string) (shared, listed bool) {
	t.Helper()
	res, err := chromedp.CallBrowser(ctx, livetabcdp.GetTabs, cdp.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tab := range res.Tabs {
		if string(tab.TargetID) == id {
			return tab.Shared, true
		}
	}
	return false, false
}

// The person shares a tab in the popup; with a shared-only policy the
// client that set it gets no other tab the user opened. (Its tabs from
// chromedp.NewContext(ctx, ...) share its browser connection, and so its
// policy; TestPolicyBelongsToItsClient shows that other clients are free.)
func TestSharedOnlyPolicy(t *testing.T) {
	alloc := env.Allocator(t)
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	defer cancelT()
	setPolicy(t, ctx, livetabcdp.SetPolicyParams{SharedOnly: true, Domains: []string{"127.0.0.1"}})
	t.Cleanup(func() {
		c, cancel := chromedp.NewContext(alloc)
		defer cancel()
		setPolicy(t, c, livetabcdp.SetPolicyParams{})
	})

	// Tabs livetab opens are allowed.
	if err := chromedp.Do(ctx, chromedp.Navigate(site.URL+"/form")); err != nil {
		t.Fatalf("a tab livetab opened: %v", err)
	}
	// Navigating outside the domains is refused by the relay.
	err := chromedp.Do(ctx, chromedp.Navigate(site.CrossURL+"/form"))
	if err == nil || !strings.Contains(err.Error(), "outside the domains") {
		t.Fatalf("navigation to another host: %v", err)
	}

	id := userTab(t, site.URL+"/form?private")
	closeUserTab(t, id)
	if shared, listed := tabEntry(t, ctx, id); shared || listed {
		t.Fatalf("a shared-only client is told of a tab the person did not share (shared %v)", shared)
	}
	uctx, cancelU := chromedp.NewContext(ctx, chromedp.WithTargetID(target.ID(id)))
	err = chromedp.Do(uctx, chromedp.Click(chromedp.CSS("#btn")))
	cancelU()
	if err == nil || !strings.Contains(err.Error(), "not shared") {
		t.Fatalf("attaching to a tab the person did not share: %v", err)
	}

	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	var tabID int64
	for _, ts := range env.Relay.Status().Tabs {
		if ts.TargetID == id {
			tabID = ts.TabID
		}
	}
	if err := u.ShareTab(context.Background(), tabID, true); err != nil {
		t.Fatal(err)
	}
	if shared, _ := tabEntry(t, ctx, id); !shared {
		t.Fatal("Livetab.getTabs does not show the tab the person shared")
	}
	uctx, cancelU = chromedp.NewContext(ctx, chromedp.WithTargetID(target.ID(id)))
	defer cancelU()
	if err := chromedp.Do(uctx, chromedp.Click(chromedp.CSS("#btn"))); err != nil {
		t.Fatalf("a shared tab: %v", err)
	}
	text, err := chromedp.Run(uctx, chromedp.Text(chromedp.CSS("#content")))
	if err != nil || text != "clicked" {
		t.Fatalf("%q %v", text, err)
	}
}
