package extcdp_test

import (
	"strings"
	"testing"

	"github.com/livetab/livetab/livetabcdp"
)

// A program held to the tabs the person shares (Livetab.setPolicy
// {sharedOnly}) learns nothing of the person's other tabs: not their ids,
// URLs or titles, by listing, asking or listening; a URL often carries a
// token, a title an inbox's first line. The person's sharing the tab makes
// it appear, as a new tab would.
func TestRedTeamSharedOnlySeesNoUnsharedTab(t *testing.T) {
	const secret = "secret-token-4f1c"
	user := userTab(t, site.URL+"/form?"+secret)
	closeUserTab(t, user)

	// One agent discovers before its policy holds, one after.
	early := dialRaw(t)
	early.must("", "Target.setDiscoverTargets", map[string]any{"discover": true})
	a := dialRaw(t)
	for _, c := range []*rawClient{a, early} {
		c.must("", livetabcdp.CommandSetPolicy, map[string]any{"sharedOnly": true})
	}
	a.must("", "Target.setDiscoverTargets", map[string]any{"discover": true})
	a.must("", "Target.setAutoAttach", map[string]any{"autoAttach": true, "flatten": true, "waitForDebuggerOnStart": false})

	asks := map[string]func() (string, error){
		"Target.getTargets": func() (string, error) {
			r, err := a.call("", "Target.getTargets", nil)
			return string(r), err
		},
		"Livetab.getTabs": func() (string, error) {
			r, err := a.call("", livetabcdp.CommandGetTabs, nil)
			return string(r), err
		},
		"Target.getTargetInfo": func() (string, error) {
			r, err := a.call("", "Target.getTargetInfo", map[string]any{"targetId": user})
			return string(r), err
		},
	}
	for name, ask := range asks {
		if got, _ := ask(); strings.Contains(got, secret) || strings.Contains(got, user) {
			t.Errorf("%s told a shared-only agent of the person's unshared tab: %s", name, got)
		}
	}

	// The person's tab moves on: another program without a policy drives
	// it, and the shared-only agents hear nothing of where it went.
	b := dialRaw(t)
	bsid := b.attach(user)
	if err := b.navigate(bsid, site.URL+"/form?"+secret+"-2"); err != nil {
		t.Fatal(err)
	}
	if got := b.eval(bsid, `location.search`); got != "?"+secret+"-2" {
		t.Fatalf("the person's tab is at %q", got)
	}
	b.must("", "Target.getTargets", nil) // the relay has heard the tab's update
	if a.seen(secret) || a.seen(user) {
		t.Errorf("a shared-only agent heard of the person's unshared tab")
	}
	if early.seen(secret+"-2") || early.hasEvent("Target.targetInfoChanged", user) {
		t.Errorf("an agent that discovered before its shared-only policy heard the unshared tab move on")
	}
	if !early.hasEvent("Target.targetDestroyed", user) {
		t.Errorf("an agent that discovered before its shared-only policy was not told the unshared tab is gone for it")
	}

	// Shared, it appears: a new target to the agents that discover, the one
	// that auto-attaches attached to it.
	shareTab(t, user)
	waitFor(t, "the shared tab to appear to the shared-only agent", func() bool {
		return a.hasEvent("Target.targetCreated", user) && a.hasEvent("Target.attachedToTarget", user)
	})
	if got, _ := asks["Target.getTargets"](); !strings.Contains(got, user) {
		t.Errorf("the shared tab is not listed to the shared-only agent: %s", got)
	}
}
