package extcdp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/livetabcdp"
)

// personOpens has the person's tab opener open a window at url with a
// click of the person's (a user gesture), and returns the window's target.
func personOpens(t *testing.T, opener, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	u, err := env.User(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	id, err := u.OpenWindow(ctx, opener, url)
	if err != nil {
		t.Fatal(err)
	}
	closeUserTab(t, id)
	return id
}

// TestRedTeamPersonsPopupIsNotShared: a window the person opens from one
// of their tabs is the person's. A program held to the shared tabs may not
// attach to it, whether its opener is driven by another program (which
// made every popup of the tab "livetab's") or is itself shared (the person
// shared the mail, not the compose window with its draft): the person
// shares it on its own.
func TestRedTeamPersonsPopupIsNotShared(t *testing.T) {
	for _, tc := range []struct {
		name   string
		shared bool
	}{{"openerDriven", false}, {"openerShared", true}} {
		t.Run(tc.name, func(t *testing.T) {
			opener := userTab(t, site.URL+"/form?persons-popup-opener-"+tc.name)
			closeUserTab(t, opener)
			other := dialRaw(t)
			other.eval(other.attach(opener), "1") // another program drives the person's tab
			if tc.shared {
				shareTab(t, opener)
			}
			a := dialRaw(t)
			a.must("", livetabcdp.CommandSetPolicy, map[string]any{"sharedOnly": true, "guardsLoads": true, "domains": []string{"127.0.0.1"}})
			if tc.shared {
				a.eval(a.attach(opener), "1")
			}
			url := site.URL + "/form?persons-compose-" + tc.name
			popup := personOpens(t, opener, url)
			a.must("", "Target.getTargets", nil) // the relay lists the tabs again
			time.Sleep(500 * time.Millisecond)
			r, err := a.call("", "Target.attachToTarget", map[string]any{"targetId": popup, "flatten": true})
			if err == nil {
				t.Errorf("a shared-only program attached to the person's window %s: %s", url, r)
			} else if !strings.Contains(err.Error(), "not shared") {
				t.Errorf("attach to the person's window: %v, want a refusal that says how to share it", err)
			}
			if got, _ := a.call("", "Target.getTargets", nil); strings.Contains(string(got), "persons-compose") {
				t.Errorf("a shared-only program lists the person's window: %s", got)
			}
		})
	}
}
