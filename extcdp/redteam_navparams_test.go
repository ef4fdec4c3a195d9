package extcdp_test

import (
	"testing"
	"time"

	"github.com/livetab/livetab/internal/browsertest"
)

// TestRedTeamSubframeTransitionOfAMainFrame: the 2026-11-29 sweep sent
// every cdproto command with edge values but Page.navigate, of which the
// relay checks only the URL (and the frame for fragments). This attacks
// its transitionType: a main frame navigated with a subframe's transition,
// {"url": <http page>, "transitionType": "auto_subframe"} (or
// "manual_subframe"), on a tab of the client's own. Measured (Chromium 156,
// 2026-11-29): on an http page the tab's renderer crashed, 4 runs of 4 (a
// renderer the person's tabs of the same site may share, which is why
// Page.crash is refused); with about:blank as the URL the extension's
// socket closed (1001, every client's commands in flight failed) in 7 of 8
// sends, and twice it did not come back (the test env restarted the
// browser). Each
// must be answered, and the browser, the extension, the tab and another
// tab must still be there.
func TestRedTeamSubframeTransitionOfAMainFrame(t *testing.T) {
	if env == nil {
		browsertest.RequireChromium(t)
	}
	e := startCrashEnv(t)
	for _, tc := range []struct{ name, url, tt string }{
		{"http/auto_subframe", site.URL + "/form?tt=auto", "auto_subframe"},
		{"http/manual_subframe", site.URL + "/form?tt=manual", "manual_subframe"},
		{"blank/auto_subframe", "about:blank", "auto_subframe"},
		{"blank/manual_subframe", "about:blank", "manual_subframe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.ensure(t)
			c := dialCDP(t, e.url)
			c.bound = 15 * time.Second
			tid, sid := c.newTab(t, site.URL+"/form?navparams")
			defer c.send("", "Target.closeTarget", map[string]any{"targetId": tid})
			if _, err := c.evalJSON(sid, "1"); err != nil {
				t.Fatal(err)
			}
			p := map[string]any{"url": tc.url, "transitionType": tc.tt}
			if _, err := c.send(sid, "Page.navigate", p); err != nil {
				t.Errorf("Page.navigate %v: %v, want an answer", p, err)
			}
			time.Sleep(500 * time.Millisecond)
			if !e.env.Bridge.Connected() {
				select {
				case <-e.env.Browser.Done():
					t.Log("the browser exited")
				case <-time.After(5 * time.Second):
					t.Log("the browser process still runs 5 s after the extension went")
				}
				t.Errorf("Page.navigate %v: the extension disconnected (every client's commands in flight failed)", p)
			}
			e.alive(t)
			if v, err := c.evalJSON(sid, "6*7"); err != nil || v != "42" {
				t.Fatalf("Page.navigate %v: the tab then answered %q %v", p, v, err)
			}
		})
	}
}
