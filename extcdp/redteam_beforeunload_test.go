package extcdp_test

import (
	"strings"
	"testing"
	"time"
)

// TestRedTeamBeforeUnloadLeftTab: a client's own tab whose page has a
// beforeunload handler (armed by a user gesture) goes when the client
// leaves, as its other tabs do; it must not stay in the person's browser
// behind a "Leave site?" prompt.
func TestRedTeamBeforeUnloadLeftTab(t *testing.T) {
	for _, how := range []string{"direct-closeTarget", "closeTarget", "leave"} {
		t.Run(how, func(t *testing.T) {
			var c *rawClient
			if how == "direct-closeTarget" {
				c = dialRawURL(t, env.Browser.DebugURL)
			} else {
				c = dialRaw(t)
			}
			id := field(c.must("", "Target.createTarget", map[string]any{"url": site.URL + "/form?beforeunload-" + how}), "targetId")
			s := field(c.must("", "Target.attachToTarget", map[string]any{"targetId": id, "flatten": true}), "sessionId")
			c.must(s, "Runtime.evaluate", map[string]any{"expression": `new Promise(r => document.readyState === "complete" ? r() : addEventListener("load", () => r()))`, "awaitPromise": true})
			c.must(s, "Runtime.evaluate", map[string]any{"expression": `addEventListener("beforeunload", e => { e.preventDefault(); e.returnValue = "stay" }); 1`, "userGesture": true})
			if how != "leave" {
				start := time.Now()
				res, err := c.call("", "Target.closeTarget", map[string]any{"targetId": id})
				t.Logf("Target.closeTarget: %s %v in %v", res, err, time.Since(start).Round(time.Millisecond))
				if err != nil {
					t.Errorf("Target.closeTarget on a tab with a beforeunload handler: %v", err)
				}
			}
			c.ws.CloseNow()
			if how == "direct-closeTarget" {
				return
			}
			var open bool
			for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
				_, open = pageTargets(t)[id]
				if !open {
					break
				}
			}
			if open {
				t.Errorf("the client's tab %s with a beforeunload handler is still open 15 s after %s (relay: %+v)", id, how, env.Relay.Status().Tabs)
			}
		})
	}
}

// TestPersonsTabKeepsItsLeaveQuestion: a program closes, on purpose
// (Livetab.closeTab), a tab of the person's whose page asks "Leave site?":
// the question stays for the person, who may have unsaved work there, and
// the program hears at once why the tab is not closed yet, not after its
// own timeout.
func TestPersonsTabKeepsItsLeaveQuestion(t *testing.T) {
	person := userTab(t, site.URL+"/form?beforeunload-person")
	closeUserTab(t, person)
	p := dialRawURL(t, env.Browser.DebugURL)
	psid := field(p.must("", "Target.attachToTarget", map[string]any{"targetId": person, "flatten": true}), "sessionId")
	p.must(psid, "Runtime.evaluate", map[string]any{"expression": `new Promise(r => document.readyState === "complete" ? r() : addEventListener("load", () => r()))`, "awaitPromise": true})
	p.must(psid, "Runtime.evaluate", map[string]any{"expression": `addEventListener("beforeunload", e => { e.preventDefault(); e.returnValue = "stay" }); 1`, "userGesture": true})
	p.must(psid, "Page.enable", nil)

	c := dialRaw(t)
	start := time.Now()
	_, err := c.call("", "Livetab.closeTab", map[string]any{"targetId": person})
	took := time.Since(start)
	t.Logf("Livetab.closeTab: %v in %v", err, took.Round(time.Millisecond))
	if err == nil || !strings.Contains(err.Error(), "Leave site?") {
		t.Errorf("Livetab.closeTab of the person's tab that asks \"Leave site?\": %v, want an error saying the person is asked", err)
	}
	if took > 10*time.Second {
		t.Errorf("Livetab.closeTab answered after %v", took)
	}
	if _, open := pageTargets(t)[person]; !open {
		t.Errorf("the person's tab closed without their answer to \"Leave site?\"")
	}
	// The person answers: stay.
	if _, err := p.call(psid, "Page.handleJavaScriptDialog", map[string]any{"accept": false}); err != nil {
		t.Logf("answering the question: %v", err)
	}
}

// TestOwnPopupClosesPastItsLeaveQuestion: a popup a client's tab opened,
// which the client may close as its own (Target.closeTarget), closes
// though its page asks "Leave site?": the person never saw that popup's
// page, and no one else is there to answer.
func TestOwnPopupClosesPastItsLeaveQuestion(t *testing.T) {
	c := dialRaw(t)
	tid, sid := c.open(site.URL + "/form?beforeunload-opener")
	t.Cleanup(func() { c.call("", "Target.closeTarget", map[string]any{"targetId": tid}) })
	c.eval(sid, `document.readyState === "complete" || new Promise(r => onload = r)`)
	c.eval(sid, `window.open("/form?beforeunload-popup"), 1`)
	popup := c.popupOf(tid)
	psid := c.attach(popup)
	c.eval(psid, `document.readyState === "complete" || new Promise(r => onload = r)`)
	c.eval(psid, `addEventListener("beforeunload", e => { e.preventDefault(); e.returnValue = "stay" }), 1`)
	start := time.Now()
	_, err := c.call("", "Target.closeTarget", map[string]any{"targetId": popup})
	t.Logf("Target.closeTarget of the popup: %v in %v", err, time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Errorf("closing the client's own popup that asks \"Leave site?\": %v", err)
	}
	var open bool
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, open = pageTargets(t)[popup]; !open {
			break
		}
	}
	if open {
		t.Errorf("the client's popup %s is still open after its close", popup)
	}
}
