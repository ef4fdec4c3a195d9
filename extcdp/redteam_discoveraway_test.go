package extcdp_test

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestRedTeamDiscoverAcrossWorkerStop: a client that discovers targets
// and auto-attaches must learn of a tab the person opened while the
// worker was stopped (the tab is what wakes it), and of its closing.
func TestRedTeamDiscoverAcrossWorkerStop(t *testing.T) {
	a := dialRaw(t)
	a.bound = 30 * time.Second
	a.must("", "Target.setDiscoverTargets", map[string]any{"discover": true})
	_, own := a.open(site.URL + "/form?disc-own")
	a.eval(own, "1")
	// Control: with the worker up, a tab the person opens is announced.
	ctl := userTab(t, site.URL+"/form?disc-control")
	t.Cleanup(func() {
		if u, err := env.User(context.Background()); err == nil {
			u.CloseTab(context.Background(), ctl)
			u.Close()
		}
	})
	deadline0 := time.Now().Add(10 * time.Second)
	for !a.hasEvent("Target.targetCreated", ctl) {
		if time.Now().After(deadline0) {
			t.Fatalf("control: the discovering client never heard of the person's tab %s opened with the worker up", ctl)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("control: targetCreated heard for the person's tab opened with the worker up")
	u := stopWorker(t)
	time.Sleep(500 * time.Millisecond)
	id, err := u.OpenTab(context.Background(), site.URL+"/form?disc-away")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { u.CloseTab(context.Background(), id) })
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	env.Bridge.WaitConnected(ctx)
	cancel()
	deadline := time.Now().Add(15 * time.Second)
	for !a.hasEvent("Target.targetCreated", id) {
		if time.Now().After(deadline) {
			t.Errorf("the discovering client never heard of the tab %s opened while the worker was away (targetInfoChanged for it: %v)", id, a.hasEvent("Target.targetInfoChanged", id))
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The tab is usable.
	s := a.attach(id)
	if v, err := a.evalJSON(s, "location.search"); err != nil || !strings.Contains(v, "disc-away") {
		t.Errorf("the tab opened while away: %q %v", v, err)
	}
	// And the client's own session came through.
	if v, err := a.evalJSON(own, "location.search"); err != nil || !strings.Contains(v, "disc-own") {
		t.Errorf("the client's own tab after the stop: %q %v", v, err)
	}
	// Now stop again, close the tab while away: the client hears it went.
	u2 := stopWorker(t)
	time.Sleep(300 * time.Millisecond)
	u2.CloseTab(context.Background(), id)
	wakeWorker(t, u2)
	deadline = time.Now().Add(15 * time.Second)
	for !a.hasEvent("Target.targetDestroyed", id) {
		if time.Now().After(deadline) {
			t.Errorf("the discovering client never heard that %s closed while the worker was away", id)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !a.seen(s) || !a.hasEvent("Target.detachedFromTarget", s) {
		t.Logf("no detachedFromTarget for the session %s", s)
	}
	m, err := a.send(s, "Runtime.evaluate", map[string]any{"expression": "1"})
	t.Logf("a command on the closed tab's session: %+v %v", m.Error, err)
	if err != nil {
		t.Errorf("a command on the closed tab's session is unanswered: %v", err)
	}
}
