package extcdp_test

import (
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
