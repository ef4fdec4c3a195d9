package extcdp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamExtensionOperationsAsCDP: the relay passes a session's
// command on to the extension under its own method name, and the
// extension runs a method of its "ext." namespace as one of its own
// operations, whatever tab the frame names. A client held to its domains
// sent "ext.closeTab" naming the person's tab, "ext.setPolicy" dropping
// its own rules, "ext.createTab" at a site outside its domains.
func TestRedTeamExtensionOperationsAsCDP(t *testing.T) {
	srv, tok := endpoint(t)
	person := userTab(t, site.URL+"/form?ext-victim")
	closeUserTab(t, person)
	a := dialRawTo(t, srv, tok)
	var personTab int64
	for deadline := time.Now().Add(10 * time.Second); personTab == 0 && time.Now().Before(deadline); {
		targetInfos(t, a) // the relay asks the extension for its tabs
		for _, ts := range env.Relay.Status().Tabs {
			if ts.TargetID == person {
				personTab = ts.TabID
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if personTab == 0 {
		t.Fatal("the person's tab is not known to the relay after 10 s")
	}
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}})
	_, sid := a.open(site.URL + "/form?ext-attacker")
	a.eval(sid, "1")
	for _, c := range []struct {
		session, method string
		params          map[string]any
	}{
		{sid, "ext.closeTab", map[string]any{"tabId": personTab}},
		{"", "ext.closeTab", map[string]any{"tabId": personTab}},
		{sid, "ext.createTab", map[string]any{"url": site.CrossURL + "/form?ext-outside", "active": false}},
		{sid, "ext.setPolicy", map[string]any{}},
		{sid, "ext.targets", map[string]any{}},
	} {
		res, err := a.call(c.session, c.method, c.params)
		t.Logf("%s on %q: %.200s %v", c.method, c.session, res, err)
		if err == nil {
			t.Errorf("the extension's own operation %s ran for a CDP client: %.200s", c.method, res)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u, err := env.User(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	ts, err := u.Targets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	open := false
	for _, ti := range ts {
		open = open || ti.TargetID == person
		if strings.Contains(ti.URL, "ext-outside") {
			t.Errorf("a tab outside the client's domains was opened through ext.createTab")
			u.CloseTab(ctx, ti.TargetID)
		}
	}
	if !open {
		t.Errorf("the person's tab was closed through ext.closeTab")
	}
}
