package extcdp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/extcdp"
)

// TestRedTeamGuardBlackboxed: a client that enabled Debugger blackboxes
// the script of the loop it leaves behind (by URL, or all scripts without
// one), or a range of it, or its context. V8 ignores a pause whose
// frames are all blackboxed, and so the guard's pause, which ended the
// loop, is ignored too: the loop held the
// person's tab past 30 s, whether its client left or stayed.
func TestRedTeamGuardBlackboxed(t *testing.T) {
	defer extcdp.SetSyncScriptBound(wedgeBound)()
	loop := map[string]any{"expression": "setTimeout(() => { for (;;) {} }, 0), 1\n//# sourceURL=https://evil.test/loop.js"}
	ways := map[string]func(a *rawClient, sa string){
		"patterns": func(a *rawClient, sa string) {
			a.call(sa, "Debugger.setBlackboxPatterns", map[string]any{"patterns": []string{"evil"}})
		},
	}
	for name, blackbox := range ways {
		for _, stay := range []bool{false, true} {
			sub := name + "/left"
			if stay {
				sub = name + "/connected"
			}
			t.Run(sub, func(t *testing.T) {
				a, sa, id := wedgePerson(t, "blackbox-"+sub)
				a.must(sa, "Debugger.enable", nil)
				blackbox(a, sa)
				for _, m := range []struct {
					method string
					params any
				}{
					{"Debugger.setBlackboxPatterns", map[string]any{"patterns": []string{"evil"}}},
					{"Debugger.setBlackboxPatterns", map[string]any{"patterns": []string{}, "skipAnonymous": true}},
					{"Debugger.setBlackboxedRanges", map[string]any{"scriptId": "1", "positions": []any{map[string]any{"lineNumber": 0, "columnNumber": 0}}}},
					{"Debugger.setBlackboxExecutionContexts", map[string]any{"uniqueIds": []string{"x"}}},
				} {
					if _, err := a.call(sa, m.method, m.params); err == nil || !strings.Contains(err.Error(), "livetab refuses") {
						t.Fatalf("%s on the person's tab: %v, want refused", m.method, err)
					}
				}
				a.must(sa, "Debugger.setBlackboxPatterns", map[string]any{"patterns": []string{}})
				leaveLoop(t, a, sa, id, loop, stay)
			})
		}
	}
}

// TestGuardLeavesADialogAlone: the page's own alert, open longer than the
// bound while the guard is on, is the person's to answer: the watchdog
// must not take the wait for a loop and end the script that opened it.
func TestGuardLeavesADialogAlone(t *testing.T) {
	defer extcdp.SetSyncScriptBound(wedgeBound)()
	a, sa, id := wedgePerson(t, "guard-dialog")
	ctx, u := asPerson(t)
	res, err := u.Call(ctx, "Target.attachToTarget", map[string]any{"targetId": id, "flatten": true})
	if err != nil {
		t.Fatal(err)
	}
	sid := field(res, "sessionId")
	// Chrome answers a dialog only to a session whose Page saw it open.
	if _, err := u.CallSession(ctx, sid, "Page.enable", nil); err != nil {
		t.Fatal(err)
	}
	a.must(sa, "Runtime.evaluate", map[string]any{"expression": `setTimeout(() => { alert("hi"); window.after = "ran" }, 0), 1`})
	time.Sleep(wedgeBound + 2*guardEveryForTests)
	if _, err := u.CallSession(ctx, sid, "Page.handleJavaScriptDialog", map[string]any{"accept": true}); err != nil {
		t.Fatalf("the person's answer to their page's alert, %v after it opened: %v", wedgeBound+2*guardEveryForTests, err)
	}
	got, err := u.CallSession(ctx, sid, "Runtime.evaluate", map[string]any{"expression": "String(window.after)", "returnByValue": true})
	if err != nil || !strings.Contains(string(got), `"ran"`) {
		t.Fatalf("the script that opened the alert, after the person answered it: %s %v, want it ran on", got, err)
	}
	if got := personClicks(t, id); got != "1" {
		t.Fatalf("the page counted %q clicks of the person's, want 1", got)
	}
}

const guardEveryForTests = 2 * time.Second

// TestRedTeamGuardAcrossNavigation: the client takes the person's tab to
// another site, whose page Chrome runs in a new renderer, and leaves its
// loop there: the guard, turned on in the old renderer, must hold in the
// new one.
func TestRedTeamGuardAcrossNavigation(t *testing.T) {
	defer extcdp.SetSyncScriptBound(wedgeBound)()
	for _, stay := range []bool{false, true} {
		name := "left"
		if stay {
			name = "connected"
		}
		t.Run(name, func(t *testing.T) {
			a, sa, id := wedgePerson(t, "guard-nav-"+name)
			if err := a.navigate(sa, site.CrossURL+"/form?guard-nav-"+name); err != nil {
				t.Fatal(err)
			}
			a.eval(sa, "document.readyState == 'complete' || new Promise(ok => onload = ok)")
			a.eval(sa, countClicks)
			leaveLoop(t, a, sa, id, map[string]any{"expression": "setTimeout(() => { for (;;) {} }, 0), 1"}, stay)
		})
	}
}

// TestRedTeamGuardInAPersonsFrame: the client leaves its loop in the
// person's cross-site iframe (its own renderer), through the frame's
// session, having turned off, or not, what ends it there. Before the
// frame had a guard of its own, the frame did not answer the person in
// 30 s.
func TestRedTeamGuardInAPersonsFrame(t *testing.T) {
	defer extcdp.SetSyncScriptBound(wedgeBound)()
	offs := map[string][][2]any{
		"plain":   nil,
		"disable": {{"Debugger.disable", nil}},
		"skip":    {{"Debugger.enable", nil}, {"Debugger.setSkipAllPauses", map[string]any{"skip": true}}},
	}
	for name, off := range offs {
		t.Run(name, func(t *testing.T) {
			a, sf, frame := personsFrame(t, "guard-frame-"+name)
			a.must(sf, "Runtime.evaluate", map[string]any{"expression": "1"})
			for _, c := range off {
				a.call(sf, c[0].(string), c[1])
			}
			a.must(sf, "Runtime.evaluate", map[string]any{"expression": "setTimeout(() => { for (;;) {} }, 0), 1"})
			time.Sleep(500 * time.Millisecond)
			ctx, u := asPerson(t)
			start := time.Now()
			if _, err := u.Eval(ctx, frame, "1"); err != nil {
				t.Fatalf("the person's frame did not answer within %v: %v", personWaits, err)
			}
			t.Logf("the person's frame answered again after %v", time.Since(start).Round(time.Millisecond))
			if name == "plain" {
				a.mu.Lock()
				defer a.mu.Unlock()
				for _, e := range a.events {
					if strings.HasPrefix(e.Method, "Debugger.") {
						t.Fatalf("a client that did not enable Debugger heard %s of the frame's guard", e.Method)
					}
				}
			}
		})
	}
}

// personsFrame attaches a client to the cross-site iframe of a tab the
// person opened; it returns the client, its session on the frame and the
// frame's target id.
func personsFrame(t *testing.T, name string) (*rawClient, string, string) {
	t.Helper()
	srv, tok := endpoint(t)
	person := userTab(t, site.URL+"/frames?"+name)
	closeUserTab(t, person)
	a := dialRawTo(t, srv, tok)
	sp := a.attach(person)
	a.eval(sp, "document.readyState == 'complete' || new Promise(ok => onload = ok)")
	a.must(sp, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
	for range 100 {
		for _, info := range targetInfos(t, a) {
			if info.Type == "iframe" && strings.HasPrefix(info.URL, site.CrossURL) {
				sf := field(a.must("", "Target.attachToTarget", map[string]any{"targetId": info.TargetID, "flatten": true}), "sessionId")
				return a, sf, info.TargetID
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("the person's cross-site iframe is not listed as a target")
	return nil, "", ""
}

// TestRedTeamGuardAfterADebuggerLeaves: a client that enabled Debugger
// leaves while another stays; its leave takes back what it set, its
// Debugger.enable among them, and the guard must still be on for the
// loop the other leaves behind.
func TestRedTeamGuardAfterADebuggerLeaves(t *testing.T) {
	defer extcdp.SetSyncScriptBound(wedgeBound)()
	for _, bUses := range []bool{false, true} {
		name := "other"
		if bUses {
			name = "otherDebugs"
		}
		t.Run(name, func(t *testing.T) {
			srv, tok := endpoint(t)
			id := userTab(t, site.URL+"/form?guard-leaves-"+name)
			closeUserTab(t, id)
			a, b := dialRawTo(t, srv, tok), dialRawTo(t, srv, tok)
			sa, sb := a.attach(id), b.attach(id)
			b.eval(sb, countClicks)
			if bUses {
				b.must(sb, "Debugger.enable", nil)
			}
			a.must(sa, "Debugger.enable", nil)
			a.ws.CloseNow()
			<-a.closed
			time.Sleep(300 * time.Millisecond)
			b.must(sb, "Runtime.evaluate", map[string]any{"expression": "setTimeout(() => { for (;;) {} }, 0), 1"})
			time.Sleep(500 * time.Millisecond)
			personSeesItBack(t, id)
		})
	}
}

// TestRedTeamGuardOtherWays: a loop in a same-origin iframe the client
// adds to the person's page (same renderer), and a loop whose client lets
// go of its session (Target.detachFromTarget) but stays connected.
func TestRedTeamGuardOtherWays(t *testing.T) {
	defer extcdp.SetSyncScriptBound(wedgeBound)()
	t.Run("sameOriginFrame", func(t *testing.T) {
		a, sa, id := wedgePerson(t, "guard-sameorigin")
		a.must(sa, "Runtime.evaluate", map[string]any{"expression": `(() => { const f = document.createElement("iframe"); f.src = "/form?inner"; document.body.append(f); f.onload = () => f.contentWindow.eval("setTimeout(() => { for (;;) {} }, 0)"); return 1 })()`})
		time.Sleep(time.Second)
		personSeesItBack(t, id)
		if got := personClicks(t, id); got != "1" {
			t.Fatalf("the page counted %q clicks of the person's, want 1", got)
		}
	})
	t.Run("detached", func(t *testing.T) {
		a, sa, id := wedgePerson(t, "guard-detached")
		a.must(sa, "Runtime.evaluate", map[string]any{"expression": "setTimeout(() => { for (;;) {} }, 0), 1"})
		time.Sleep(500 * time.Millisecond)
		a.must("", "Target.detachFromTarget", map[string]any{"sessionId": sa})
		personSeesItBack(t, id)
		if got := personClicks(t, id); got != "1" {
			t.Fatalf("the page counted %q clicks of the person's, want 1", got)
		}
	})
}

// TestRedTeamGuardPauseHeld: a client that enabled Debugger pauses the
// person's page and stays: before, the page did not answer the person in
// 30 s. A pause held past the bound is resumed.
func TestRedTeamGuardPauseHeld(t *testing.T) {
	defer extcdp.SetSyncScriptBound(wedgeBound)()
	a, sa, id := wedgePerson(t, "guard-pause-held")
	a.must(sa, "Debugger.enable", nil)
	a.must(sa, "Debugger.pause", nil)
	go a.send(sa, "Runtime.evaluate", map[string]any{"expression": "1"}) // the pause lands
	time.Sleep(time.Second)
	personSeesItBack(t, id)
	if got := personClicks(t, id); got != "1" {
		t.Fatalf("the page counted %q clicks of the person's, want 1", got)
	}
	if !a.heard("Debugger.resumed", sa) {
		t.Fatal("the client whose pause was resumed heard no Debugger.resumed")
	}
}
