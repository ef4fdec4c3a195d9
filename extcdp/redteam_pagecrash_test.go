package extcdp_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/internal/browsertest"
)

// TestRedTeamCommandsThatEndATab: commands that Chrome's port would carry
// out and that, through the extension, end or wedge the person's tab.
// Page.crash kills the tab's renderer, which Chrome may share with other
// tabs of the person's (same site), and its reply never came (the client
// waited past 20 s); Page.close closed a tab the person opened; a CPU
// throttling rate of 1000 left the page answering nothing. Each is refused
// with an error that says why, at once, and the person's tab lives on and
// answers.
func TestRedTeamCommandsThatEndATab(t *testing.T) {
	if env == nil {
		t.Skip("no test browser")
	}
	ctx := context.Background()
	for _, tc := range []struct {
		method string
		params any
		want   string
	}{
		{"Page.crash", nil, "refuses Page.crash"},
		{"Page.close", nil, "tab the person opened"},
		{"Emulation.setCPUThrottlingRate", map[string]any{"rate": 1000}, "at most 20"},
	} {
		t.Run(tc.method, func(t *testing.T) {
			u, err := env.User(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer u.Close()
			id, err := u.OpenTab(ctx, site.URL+"/form")
			if err != nil {
				t.Fatal(err)
			}
			defer u.CloseTab(ctx, id)
			c := dialRaw(t)
			c.bound = 5 * time.Second
			sid := c.attach(id)
			m, err := c.send(sid, tc.method, tc.params)
			if err != nil {
				t.Fatalf("%s: %v", tc.method, err)
			}
			if m.Error == nil || !strings.Contains(m.Error.Message, tc.want) {
				t.Errorf("%s answered %+v, want an error saying %q", tc.method, m.Error, tc.want)
			}
			c.send("", "Target.detachFromTarget", map[string]any{"sessionId": sid})
			personsTabAnswers(t, u, id)
		})
	}
}

// personsTabAnswers fails t unless the person's tab id is open and its
// page evaluates.
func personsTabAnswers(t *testing.T, u *browsertest.User, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ts, err := u.Targets(ctx)
	if err != nil {
		t.Fatalf("the browser does not answer: %v", err)
	}
	if !slices.ContainsFunc(ts, func(ti browsertest.TargetInfo) bool { return ti.TargetID == id }) {
		t.Fatal("the person's tab is gone")
	}
	if v, err := u.Eval(ctx, id, "1+1"); err != nil || string(v) != "2" {
		t.Fatalf("the person's tab does not answer: %s %v", v, err)
	}
}

// TestPageCloseOwnTab: Page.close still closes a tab the client opened
// (Puppeteer's page.close({runBeforeUnload: true}) sends it), and is
// answered.
func TestPageCloseOwnTab(t *testing.T) {
	if env == nil {
		t.Skip("no test browser")
	}
	c := dialRaw(t)
	c.bound = 10 * time.Second
	id, sid := c.open(site.URL + "/form")
	m, err := c.send(sid, "Page.close", nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Error != nil && !strings.Contains(m.Error.Message, "closed") {
		t.Errorf("Page.close on its own tab: %s", m.Error.Message)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, open := pageTargets(t)[id]; !open {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the client's own tab is still open after Page.close")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
