package extcdp_test

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Red team (trust), with the real extension: the person opens a tab while
// a client's tab is the active one (Chrome sets openerTabId then); it is the
// person's, so every client sees it. And a client on the person's tab cannot
// reach another client's tab through window.open's named-window lookup.
func TestRedTeamPersonsTabsStayThePersons(t *testing.T) {
	a, b := dialRaw(t), dialRaw(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	tA := field(a.must("", "Target.createTarget", map[string]any{"url": site.URL + "/form?ownedByA"}), "targetId")
	sA := field(a.must("", "Target.attachToTarget", map[string]any{"targetId": tA, "flatten": true}), "sessionId")
	a.must(sA, "Runtime.evaluate", map[string]any{"expression": `window.name = "a-secret-window"; document.title = "secret-title-of-A"; 1`})
	a.must("", "Target.activateTarget", map[string]any{"targetId": tA})

	u, err := env.User(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	pid, err := u.OpenTab(ctx, site.URL+"/form?persons-new-tab")
	if err != nil {
		t.Fatal(err)
	}
	defer u.CloseTab(context.Background(), pid)

	sees := func(c *rawClient, id string) bool {
		for _, info := range targetInfos(t, c) {
			if info.TargetID == id {
				return true
			}
		}
		return false
	}
	deadline := time.Now().Add(5 * time.Second)
	for !sees(b, pid) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if !sees(b, pid) {
		t.Fatalf("the tab the person opened while A's tab was active is hidden from B: it was handed to A")
	}
	time.Sleep(700 * time.Millisecond) // past the extension's wait for an opener link
	if !sees(b, pid) {
		t.Fatalf("the person's new tab became A's after a while")
	}

	// B, on the person's tab, looks for A's tab by its window name.
	sB := field(b.must("", "Target.attachToTarget", map[string]any{"targetId": pid, "flatten": true}), "sessionId")
	res := string(b.must(sB, "Runtime.evaluate", map[string]any{
		"expression":    `(() => { const w = window.open("", "a-secret-window"); if (!w) return "blocked"; window.__w = w; try { return "got:" + w.document.title + "|" + w.location.href; } catch (e) { return "cross:" + e.message; } })()`,
		"userGesture":   true,
		"returnByValue": true,
	}))
	if strings.Contains(res, "secret-title-of-A") || strings.Contains(res, "ownedByA") {
		t.Errorf("B reached A's tab through window.open from the person's tab: %s", res)
	}
	t.Logf("window.open by name from the person's tab: %s", res)
	defer b.call(sB, "Runtime.evaluate", map[string]any{"expression": `window.__w && window.__w.close()`})
	// Whatever window.open made is the person's, not A's, and A's tab is
	// still hidden from B.
	if sees(b, tA) {
		t.Errorf("B lists A's tab")
	}
	if !sees(a, pid) {
		t.Errorf("A does not see the person's tab")
	}
}

// chrome.debugger lets a tab's session run Target.createTarget and
// Target.closeTarget (of its own tab). Sent raw, the first opened a tab
// that belonged to no client (everyone saw it, it outlived its client, and
// it skipped the extension's policy check of createTab); the second closed
// the person's tab, which a client may only detach from.
func TestRedTeamSessionTargetCommands(t *testing.T) {
	a, b := dialRaw(t), dialRaw(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	u, err := env.User(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	pid, err := u.OpenTab(ctx, site.URL+"/form?persons")
	if err != nil {
		t.Fatal(err)
	}
	defer u.CloseTab(context.Background(), pid)
	time.Sleep(800 * time.Millisecond)

	sB := field(b.must("", "Target.attachToTarget", map[string]any{"targetId": pid, "flatten": true}), "sessionId")
	res, err := b.call(sB, "Target.createTarget", map[string]any{"url": site.URL + "/form?made-by-B-on-a-session"})
	if err != nil {
		t.Fatal(err)
	}
	made := field(res, "targetId")
	defer u.CloseTab(context.Background(), made)
	time.Sleep(800 * time.Millisecond)
	for _, info := range targetInfos(t, a) {
		if info.TargetID == made {
			t.Errorf("the tab B opened with a session's Target.createTarget is visible to A: it is no one's")
		}
	}
	seen := false
	for _, info := range targetInfos(t, b) {
		seen = seen || info.TargetID == made
	}
	if !seen {
		t.Errorf("B does not see the tab it opened")
	}

	if _, err := b.call(sB, "Target.closeTarget", map[string]any{"targetId": pid}); err != nil {
		t.Logf("session closeTarget of the person's tab: %v", err)
	}
	time.Sleep(500 * time.Millisecond)
	ts, err := u.Targets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	open := false
	for _, ti := range ts {
		open = open || ti.TargetID == pid
	}
	if !open {
		t.Errorf("a session's Target.closeTarget closed the person's tab")
	}
}

// A command that would never finish (a promise that never settles) on a
// tab that its client then closes, or detaches from: the command is
// answered at once, not after the 5-minute bound.
func TestRedTeamPendingCommandOnClosedTab(t *testing.T) {
	for _, how := range []string{"Target.closeTarget", "Target.detachFromTarget"} {
		a := dialRaw(t)
		tA := field(a.must("", "Target.createTarget", map[string]any{"url": site.URL + "/form?pending"}), "targetId")
		sA := field(a.must("", "Target.attachToTarget", map[string]any{"targetId": tA, "flatten": true}), "sessionId")
		done := make(chan error, 1)
		go func() {
			_, err := a.call(sA, "Runtime.evaluate", map[string]any{"expression": "new Promise(() => {})", "awaitPromise": true})
			done <- err
		}()
		time.Sleep(300 * time.Millisecond)
		params := map[string]any{"targetId": tA}
		if how == "Target.detachFromTarget" {
			params = map[string]any{"sessionId": sA}
		}
		a.must("", how, params)
		select {
		case err := <-done:
			t.Logf("%s: the pending evaluate was answered: %v", how, err)
		case <-time.After(15 * time.Second):
			t.Errorf("%s: a command pending on the tab got no answer in 15 s", how)
		}
		a.call("", "Target.closeTarget", map[string]any{"targetId": tA})
	}
}
