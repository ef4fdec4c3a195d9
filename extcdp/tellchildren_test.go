package extcdp_test

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

// A program attaches twice (two sessions) to a popup the relay watches,
// whose frame of another site is already there, and turns auto-attach on
// as Playwright does (waitForDebuggerOnStart true), twice on each, the
// second while the first's reply is on its way: each session hears of the
// frame exactly once (Playwright fails on a second attachedToTarget of one
// target), and of a frame added later, once.
func TestAutoAttachTellsEachSessionOnce(t *testing.T) {
	site := serveFrameSites(t)
	_, opener := site.framedDownload("never-once.bin", true)
	s, tok := endpoint(t)
	b := dialRawTo(t, s, tok)
	b.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "deny"})
	tid, sid := b.open(opener)
	t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": tid}) })
	b.eval(sid, "document.getElementById('x').click(), 1")
	pid, ok := waitPopupAttached(b, tid, true, 10*time.Second)
	if pid != "" {
		t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": pid}) })
	}
	if !ok {
		t.Fatal("the relay never watched the popup: this run shows nothing")
	}
	time.Sleep(time.Second)
	type sess struct {
		cl  *rawClient
		sid string
	}
	var all []sess
	for _, cl := range []*rawClient{b, b} {
		psid := field(cl.must("", "Target.attachToTarget", map[string]any{"targetId": pid, "flatten": true}), "sessionId")
		all = append(all, sess{cl, psid})
	}
	done := make(chan struct{}, 8)
	for _, x := range all {
		for range 2 {
			go func() {
				x.cl.call(x.sid, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true})
				done <- struct{}{}
			}()
		}
	}
	for range 4 {
		<-done
	}
	time.Sleep(time.Second)
	for i, x := range all {
		n := 0
		x.cl.mu.Lock()
		for _, e := range x.cl.events {
			if e.Method == "Target.attachedToTarget" && e.SessionID == x.sid && strings.Contains(string(e.Params), `"iframe"`) {
				n++
			}
		}
		x.cl.mu.Unlock()
		if n != 1 {
			t.Errorf("session %d heard %d attachedToTarget of the popup's frame, want 1", i, n)
		}
	}
	// The first leaves: its state is undone; the second must still hear
	// new frames, once.
	b.must("", "Target.detachFromTarget", map[string]any{"sessionId": all[0].sid})
	time.Sleep(500 * time.Millisecond)
	b.eval(all[1].sid, `(() => { const f = document.createElement('iframe'); f.src = location.origin.replace('127.0.0.1', 'localhost') + '/page'; document.body.append(f); return 1 })()`)
	time.Sleep(2 * time.Second)
	n := 0
	b.mu.Lock()
	for _, e := range b.events {
		if e.Method == "Target.attachedToTarget" && e.SessionID == all[1].sid && strings.Contains(string(e.Params), `"iframe"`) {
			n++
		}
	}
	b.mu.Unlock()
	if n != 2 {
		t.Errorf("the staying session heard %d attachedToTarget of frames after the other left and a frame was added, want 2", n)
	}
}

// A program that denies downloads auto-attaches in its tab, whose page
// frames another site's page, which frames a third site's: the relay turns
// auto-attach on in the middle frame itself, to hear of the nested frame's
// downloads. The program hears of the nested frame once on the middle
// frame's session, before and after it turns auto-attach on there too.
func TestAutoAttachTellsOfNestedFramesOnce(t *testing.T) {
	s := serveFrameSites(t)
	b := dialRaw(t)
	b.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "deny"})
	tid, sid := b.open("about:blank")
	t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": tid}) })
	b.must(sid, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
	b.navigate(sid, s.a+"/top?f="+url.QueryEscape(s.c+"/mid?f="+url.QueryEscape(s.lh+"/page")))
	// heard counts the attachedToTarget of what on session on by the
	// session they name, and returns the last one named: Chrome may
	// attach a frame, detach it as the frame swaps process, and attach it
	// again under a new session.
	heard := func(on, what string) (times map[string]int, child string) {
		b.mu.Lock()
		defer b.mu.Unlock()
		times = map[string]int{}
		for _, e := range b.events {
			if e.Method == "Target.attachedToTarget" && e.SessionID == on && strings.Contains(string(e.Params), what) {
				child = field(e.Params, "sessionId")
				times[child]++
			}
		}
		return times, child
	}
	var mid string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, mid = heard(sid, `"iframe"`); mid != "" {
			if n, _ := heard(mid, `"iframe"`); len(n) > 0 {
				break
			}
		}
	}
	if mid == "" {
		t.Fatal("the frame of another site never attached: this run shows nothing")
	}
	for range 2 {
		b.must(mid, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true})
	}
	time.Sleep(500 * time.Millisecond)
	times, inner := heard(mid, `"iframe"`)
	for child, n := range times {
		if n != 1 {
			t.Errorf("the program heard the nested frame's session %s attached %d times on the middle frame's session, want 1", child, n)
		}
	}
	if got := b.eval(inner, "location.pathname"); got != "/page" {
		t.Errorf("the nested frame's session reads %q, want /page", got)
	}
}
