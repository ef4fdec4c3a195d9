package extcdp_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/bridge"
	"github.com/livetab/livetab/extension"
	"github.com/livetab/livetab/internal/browsertest"
	"github.com/livetab/livetab/livetabcdp"
)

// Each typed command of the Livetab domain against the real extension:
// the params the caller encodes are the ones the relay decodes, and the
// results decode into livetabcdp's types, on the browser session and on a
// page session alike (upload asks on its page).
func TestLivetabDomainRoundTrip(t *testing.T) {
	ctx := newTab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(site.URL+"/form?domain")); err != nil {
		t.Fatal(err)
	}
	own := chromedp.FromContext(ctx).Target.TargetID

	info, err := chromedp.CallBrowser(ctx, livetabcdp.GetInfo, cdp.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	if info.ExtensionID != extension.ID || info.Version == "" || info.UserAgent == "" || info.Bridge != bridge.Version {
		t.Errorf("Livetab.getInfo: %+v", info)
	}
	onPage, err := chromedp.Call(ctx, livetabcdp.GetInfo, cdp.Empty{})
	if err != nil || onPage != info {
		t.Errorf("Livetab.getInfo on the page session: %+v, %v; on the browser %+v", onPage, err, info)
	}

	user := userTab(t, site.URL+"/form?domain-user")
	closeUserTab(t, user)
	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	if _, err := u.Call(context.Background(), "Target.activateTarget", map[string]string{"targetId": user}); err != nil {
		t.Fatal(err)
	}
	active, err := chromedp.CallBrowser(ctx, livetabcdp.GetActiveTab, cdp.Empty{})
	if err != nil || string(active.TargetID) != user {
		t.Errorf("Livetab.getActiveTab: %+v, %v; want %s", active, err, user)
	}

	tabs, err := chromedp.CallBrowser(ctx, livetabcdp.GetTabs, cdp.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	find := func(tabs []livetabcdp.TabEntry, id target.ID) (livetabcdp.TabEntry, bool) {
		i := slices.IndexFunc(tabs, func(e livetabcdp.TabEntry) bool { return e.TargetID == id })
		if i < 0 {
			return livetabcdp.TabEntry{}, false
		}
		return tabs[i], true
	}
	if e, ok := find(tabs.Tabs, own); !ok || !e.Created || e.TabID == 0 || e.URL != site.URL+"/form?domain" {
		t.Errorf("Livetab.getTabs, the client's own tab: %+v (listed %v)", e, ok)
	}
	if e, ok := find(tabs.Tabs, target.ID(user)); !ok || e.Created || !e.Active {
		t.Errorf("Livetab.getTabs, the user's active tab: %+v (listed %v)", e, ok)
	}

	if _, err := chromedp.CallBrowser(ctx, livetabcdp.SetPolicy, livetabcdp.SetPolicyParams{Domains: []string{"127.0.0.1"}, BlockPrivate: true, PrivateAllowed: []string{"127.0.0.1"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.CallBrowser(ctx, livetabcdp.SetPolicy, livetabcdp.SetPolicyParams{}); err != nil {
		t.Fatal(err)
	}
	bad := cdp.Command[map[string]any, cdp.Empty]{Method: livetabcdp.CommandSetPolicy}
	if _, err := chromedp.CallBrowser(ctx, bad, map[string]any{"domains": 7}); err == nil || livetabcdp.IsUnsupported(err) {
		t.Errorf("Livetab.setPolicy with bad params: %v, want invalid params", err)
	}

	if _, err := chromedp.CallBrowser(ctx, livetabcdp.CloseTab, livetabcdp.CloseTabParams{TargetID: target.ID(user)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the closed tab to leave Livetab.getTabs", func() bool {
		tabs, err := chromedp.CallBrowser(ctx, livetabcdp.GetTabs, cdp.Empty{})
		_, listed := find(tabs.Tabs, target.ID(user))
		return err == nil && !listed
	})

	// A Livetab method the relay does not know reads as a plain Chrome's
	// answer would.
	unknown := cdp.Command[cdp.Empty, cdp.Empty]{Method: livetabcdp.Domain + "noSuchMethod"}
	if _, err := chromedp.CallBrowser(ctx, unknown, cdp.Empty{}); !livetabcdp.IsUnsupported(err) {
		t.Errorf("an unknown Livetab method: %v, want method not found", err)
	}
}

// A plain Chromium (chromedp's ExecAllocator, no extension) answers a
// Livetab method as one it does not know, on the browser session and on a
// page session, and IsUnsupported says so: the callers' cue to fall back.
func TestLivetabUnsupportedOnPlainChromium(t *testing.T) {
	var b browsertest.Backends
	t.Cleanup(b.Close)
	ctx, cancel := context.WithTimeout(b.ExecTab(t), 30*time.Second)
	defer cancel()
	_, err := chromedp.CallBrowser(ctx, livetabcdp.GetInfo, cdp.Empty{})
	if !livetabcdp.IsUnsupported(err) {
		t.Fatalf("Livetab.getInfo on the browser of a plain Chromium: %v, want method not found", err)
	}
	t.Logf("plain Chromium answers: %v", err)
	if _, err := chromedp.Call(ctx, livetabcdp.GetTabs, cdp.Empty{}); !livetabcdp.IsUnsupported(err) {
		t.Fatalf("Livetab.getTabs on a page of a plain Chromium: %v, want method not found", err)
	}
}
