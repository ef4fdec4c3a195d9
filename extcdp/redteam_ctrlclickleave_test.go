package extcdp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
)

// armLeaveQuestion has the person (their own connection to Chrome) put unsaved work
// in the tab: a beforeunload handler armed by the person's gesture. The
// cleanup disarms it, so that the shared browser closes the tab.
func armLeaveQuestion(t *testing.T, target string) *rawClient {
	t.Helper()
	p := dialRawURL(t, env.Browser.DebugURL)
	psid := field(p.must("", "Target.attachToTarget", map[string]any{"targetId": target, "flatten": true}), "sessionId")
	p.must(psid, "Runtime.evaluate", map[string]any{"expression": `new Promise(r => document.readyState === "complete" ? r() : addEventListener("load", () => r()))`, "awaitPromise": true})
	p.must(psid, "Runtime.evaluate", map[string]any{"expression": `window.armLeaveQuestioned = true; addEventListener("beforeunload", e => { if (window.armLeaveQuestioned) { e.preventDefault(); e.returnValue = "unsaved" } }); 1`, "userGesture": true})
	t.Cleanup(func() {
		p.call(psid, "Runtime.evaluate", map[string]any{"expression": `window.armLeaveQuestioned = false`})
		p.call(psid, "Page.handleJavaScriptDialog", map[string]any{"accept": false})
	})
	closeUserTab(t, target)
	return p
}

// stillOpenAfter waits d and reports whether target is still open.
func stillOpenAfter(t *testing.T, target string, d time.Duration) bool {
	t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if _, open := pageTargets(t)[target]; !open {
			return false
		}
	}
	return true
}

// TestRedTeamCtrlClickTabKeepsLeaveQuestion: the person Ctrl+clicks a
// link in a program's tab (downloads.go: such a tab "stays theirs") and
// writes in the new tab; the program leaves.
func TestRedTeamCtrlClickTabKeepsLeaveQuestion(t *testing.T) {
	for _, how := range []string{"leave", "closeTarget"} {
		t.Run(how, func(t *testing.T) {
			u, err := env.User(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer u.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			c := dialRaw(t)
			tid, sid := c.open(site.URL + "/form?ctrlclick-leave-opener-" + how)
			t.Cleanup(func() { c.call("", "Target.closeTarget", map[string]any{"targetId": tid}) })
			c.eval(sid, `document.readyState === "complete" || new Promise(r => onload = r)`)
			c.eval(sid, `document.body.insertAdjacentHTML("afterbegin", '<a id="zzsx" href="/form?ctrlclick-leave-`+how+`" style="position:fixed;left:0;top:0;width:300px;height:300px;display:block;z-index:99999;background:red">read</a>'), 1`)
			res, err := u.Call(ctx, "Target.attachToTarget", map[string]any{"targetId": tid, "flatten": true})
			if err != nil {
				t.Fatal(err)
			}
			var a struct {
				SessionID string `json:"sessionId"`
			}
			jsonv2.Unmarshal(res, &a, wire.Options)
			for _, typ := range []string{"mousePressed", "mouseReleased"} {
				if _, err := u.CallSession(ctx, a.SessionID, "Input.dispatchMouseEvent", map[string]any{
					"type": typ, "x": 50, "y": 50, "button": "left", "clickCount": 1, "modifiers": 2,
				}); err != nil {
					t.Fatal(err)
				}
			}
			u.Call(ctx, "Target.detachFromTarget", map[string]any{"sessionId": a.SessionID})
			var pid string
			for deadline := time.Now().Add(10 * time.Second); pid == "" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				ts, _ := u.Targets(ctx)
				for _, ti := range ts {
					if ti.Type == "page" && strings.HasSuffix(ti.URL, "ctrlclick-leave-"+how) {
						pid = ti.TargetID
					}
				}
			}
			if pid == "" {
				t.Fatal("the person's Ctrl+click opened no tab")
			}
			time.Sleep(time.Second)
			armLeaveQuestion(t, pid)
			if how == "leave" {
				c.ws.CloseNow()
			} else {
				start := time.Now()
				r, err := c.call("", "Target.closeTarget", map[string]any{"targetId": pid})
				t.Logf("Target.closeTarget of the person's Ctrl+click tab: %s %v in %v", r, err, time.Since(start).Round(time.Millisecond))
			}
			if !stillOpenAfter(t, pid, 8*time.Second) {
				t.Errorf("the tab the person opened with Ctrl+click from a program's tab, with their unsaved work, was closed (%s) past its \"Leave site?\" question", how)
			}
		})
	}
}
