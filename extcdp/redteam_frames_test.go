package extcdp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamFrameOutsideTheDomains: a client held to its domains puts an
// iframe of a site outside them into its own allowed page (or the page
// has one), auto-attaches, and reads the frame's document through the
// frame's session: the page outside the domains, loaded with the person's
// cookies, in the client's hands.
func TestRedTeamFrameOutsideTheDomains(t *testing.T) {
	srv, tok := endpoint(t)
	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}})
	_, sid := a.open(site.URL + "/form?frame-reader")
	a.eval(sid, "1")
	a.must(sid, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
	a.eval(sid, `new Promise(ok => {
		const f = document.createElement('iframe');
		f.onload = () => ok('loaded');
		f.src = '`+site.CrossURL+`/form?outside-secret';
		document.body.appendChild(f);
	})`)
	var child string
	deadline := time.Now().Add(10 * time.Second)
	for child == "" && time.Now().Before(deadline) {
		a.mu.Lock()
		for _, e := range a.events {
			if e.Method == "Target.attachedToTarget" && e.SessionID == sid && strings.Contains(string(e.Params), `"iframe"`) {
				child = field(e.Params, "sessionId")
			}
		}
		a.mu.Unlock()
		time.Sleep(100 * time.Millisecond)
	}
	if child == "" {
		t.Fatalf("no child session was announced for the frame")
	} else {
		// What turns on the events of the frame's life works: a client
		// (Playwright) needs them to see its page loaded.
		for _, m := range []string{"Page.enable", "Page.getFrameTree", "Runtime.enable"} {
			if _, err := a.call(child, m, nil); err != nil {
				t.Errorf("%s on the frame outside the domains: %v", m, err)
			}
		}
		if _, err := a.call(child, "Page.setLifecycleEventsEnabled", map[string]any{"enabled": true}); err != nil {
			t.Errorf("Page.setLifecycleEventsEnabled on the frame outside the domains: %v", err)
		}
		res, err := a.call(child, "Runtime.evaluate", map[string]any{"expression": "location.href + ' ' + document.title", "returnByValue": true})
		t.Logf("the frame's session: %.200s %v", res, err)
		if strings.Contains(string(res), "outside-secret") {
			t.Errorf("a client held to 127.0.0.1 read a frame at %s through its session: %.200s", site.CrossURL, res)
		}
	}
	// The frame's target, by Target.getTargets and an explicit attach.
	for _, info := range targetInfos(t, a) {
		if info.Type == "iframe" && strings.Contains(info.URL, "outside-secret") {
			res, err := a.call("", "Target.attachToTarget", map[string]any{"targetId": info.TargetID, "flatten": true})
			t.Logf("attachToTarget of the frame: %.200s %v", res, err)
			if err == nil {
				s := field(res, "sessionId")
				got, err := a.call(s, "Runtime.evaluate", map[string]any{"expression": "location.href + ' ' + document.title", "returnByValue": true})
				if strings.Contains(string(got), "outside-secret") {
					t.Errorf("a client held to 127.0.0.1 read a frame at %s through attachToTarget: %.200s %v", site.CrossURL, got, err)
				}
			}
		}
	}
}

// TestFrameInsideTheDomains: a frame of another site that the client's
// domains name is read and driven through its session as before.
func TestFrameInsideTheDomains(t *testing.T) {
	srv, tok := endpoint(t)
	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1", "localhost"}})
	_, sid := a.open(site.URL + "/form?frame-allowed")
	a.eval(sid, "1")
	a.must(sid, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true})
	// The frame waits for the debugger: its load ends after the child's
	// runIfWaitingForDebugger, so the evaluate that adds it is not awaited.
	loaded := make(chan struct{})
	go func() {
		defer close(loaded)
		a.send(sid, "Runtime.evaluate", map[string]any{"expression": `new Promise(ok => {
			const f = document.createElement('iframe');
			f.onload = () => ok('loaded');
			f.src = '` + site.CrossURL + `/form?inside';
			document.body.appendChild(f);
		})`, "awaitPromise": true})
	}()
	defer func() { <-loaded }()
	var child string
	timeout := time.After(10 * time.Second)
	for child == "" {
		select {
		case ev := <-a.evs:
			if ev.Method == "Target.attachedToTarget" && ev.SessionID == sid && strings.Contains(string(ev.Params), `"iframe"`) {
				child = field(ev.Params, "sessionId")
			}
		case <-timeout:
			t.Fatal("no child session was announced for the frame in 10 s")
		}
	}
	a.must(child, "Runtime.runIfWaitingForDebugger", nil)
	var got string
	for range 50 {
		res, err := a.call(child, "Runtime.evaluate", map[string]any{"expression": "location.href", "returnByValue": true})
		if err != nil {
			t.Fatalf("a frame inside the domains: %v", err)
		}
		if got = string(res); strings.Contains(got, "inside") {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the frame's session never showed its page: %s", got)
}

// TestPlaywrightFrameOutsideTheDomains: unmodified Playwright, held to
// its domains, loads a page with a frame of another site (it counts the
// page loaded when each frame is) and cannot read that frame.
func TestPlaywrightFrameOutsideTheDomains(t *testing.T) {
	srv, tok := endpoint(t)
	site.RunClient(t, "playwright-policy.test.js", env.Relay.BrowserURL(strings.TrimPrefix(srv.URL, "http://"), tok))
}
