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

// A program held to its domains learns nothing of the person's tabs
// outside them, whether they were there before or went there while it
// listened; the person's tab on its domains it lists.
func TestRedTeamDomainsSeeNoTabOutside(t *testing.T) {
	const secret = "secret-token-9d2e"
	outside := userTab(t, site.CrossURL+"/form?"+secret) // localhost: another host
	closeUserTab(t, outside)
	inside := userTab(t, site.URL+"/form?inside")
	closeUserTab(t, inside)

	early := dialRaw(t)
	early.must("", "Target.setDiscoverTargets", map[string]any{"discover": true})
	a := dialRaw(t)
	for _, c := range []*rawClient{a, early} {
		c.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}})
	}
	a.must("", "Target.setDiscoverTargets", map[string]any{"discover": true})
	if !early.hasEvent("Target.targetDestroyed", outside) {
		t.Errorf("an agent that discovered before its domains was not told the tab outside them is gone for it")
	}
	for _, m := range []string{"Target.getTargets", livetabcdp.CommandGetTabs} {
		got := string(a.must("", m, nil))
		if strings.Contains(got, secret) || strings.Contains(got, outside) {
			t.Errorf("%s told an agent held to 127.0.0.1 of the person's tab on another host: %s", m, got)
		}
		if !strings.Contains(got, inside) {
			t.Errorf("%s does not list the person's tab on the agent's domain: %s", m, got)
		}
	}

	// The person's tab on the domain leaves it: gone for the agent, and
	// nothing of where it went.
	b := dialRaw(t)
	bsid := b.attach(inside)
	if err := b.navigate(bsid, site.CrossURL+"/form?"+secret+"-2"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the relay to hear the person's tab moved", func() bool {
		return strings.Contains(string(b.must("", "Target.getTargets", nil)), secret+"-2")
	})
	// (Its target id may change with the move to another site: what
	// matters is that nothing of it reaches the agent.)
	if got := string(a.must("", "Target.getTargets", nil)); strings.Contains(got, secret) {
		t.Errorf("the agent held to 127.0.0.1 lists the tab that left for another host: %s", got)
	}
	if a.seen(secret) || a.seen(outside) {
		t.Errorf("an agent held to 127.0.0.1 heard of the person's tabs on another host")
	}
}
