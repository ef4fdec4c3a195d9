package extcdp_test

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestRedTeamBrowserContextsOfOthers: client A makes a browser context and
// a tab in it; client B lists the contexts, disposes of A's (its id taken
// from A's target info, as a program that read it elsewhere would), of
// the default one, closes and activates A's tab. Then A disposes of its
// own context while attached to the person's tab. Only A's own tab may
// close, and only on A's word.
func TestRedTeamBrowserContextsOfOthers(t *testing.T) {
	if env == nil {
		t.Skip("no test browser")
	}
	ctx := context.Background()
	u, err := env.User(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	person, err := u.OpenTab(ctx, site.URL+"/form?person")
	if err != nil {
		t.Fatal(err)
	}
	defer u.CloseTab(ctx, person)
	a, b := dialRaw(t), dialRaw(t)
	bc := field(a.must("", "Target.createBrowserContext", nil), "browserContextId")
	tab := field(a.must("", "Target.createTarget", map[string]any{"url": site.URL + "/form?A", "browserContextId": bc}), "targetId")
	a.attach(person)
	open := func() map[string]bool {
		ts, err := u.Targets(ctx)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]bool{}
		for _, ti := range ts {
			m[ti.TargetID] = true
		}
		return m
	}
	if got := string(b.must("", "Target.getBrowserContexts", nil)); strings.Contains(got, bc) {
		t.Errorf("B lists A's browser context: %s", got)
	}
	for _, try := range []struct {
		method string
		params any
	}{
		{"Target.disposeBrowserContext", map[string]any{"browserContextId": bc}},
		{"Target.disposeBrowserContext", map[string]any{"browserContextId": ""}},
		{"Target.closeTarget", map[string]any{"targetId": tab}},
		{"Target.activateTarget", map[string]any{"targetId": tab}},
		{"Target.createTarget", map[string]any{"url": site.URL + "/form?B", "browserContextId": bc}},
	} {
		m, err := b.send("", try.method, try.params)
		if err != nil {
			t.Fatal(err)
		}
		if m.Error == nil && try.method != "Target.createTarget" {
			t.Errorf("B's %s %v succeeded", try.method, try.params)
		}
		if try.method == "Target.createTarget" && m.Error == nil {
			// Made in B's default context, not in A's: A's dispose must
			// leave it.
			defer func(id string) {
				if !open()[id] {
					t.Errorf("A's dispose of its context closed B's tab made with A's context id")
				}
			}(field(m.Result, "targetId"))
		}
	}
	if !open()[tab] {
		t.Fatal("B closed A's tab")
	}
	a.must("", "Target.disposeBrowserContext", map[string]any{"browserContextId": bc})
	waitFor(t, "A's tab to close", func() bool { return !open()[tab] })
	if !open()[person] {
		t.Error("A's dispose closed the person's tab")
	}
	if got := string(a.must("", "Target.getBrowserContexts", nil)); slices.Contains(strings.Split(got, `"`), bc) {
		t.Errorf("A still lists its disposed context: %s", got)
	}
	personsTabAnswers(t, u, person)
}
