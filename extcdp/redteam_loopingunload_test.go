package extcdp_test

import (
	"testing"
	"time"
)

// TestRedTeamOwnTabWithALoopingUnloadCloses: a client's own tab whose page loops
// in its beforeunload handler (a hostile page the program visited; no
// policy, so no quiet close) goes when the client closes it, or leaves
// (leave.go: "the tabs it opened close").
func TestRedTeamOwnTabWithALoopingUnloadCloses(t *testing.T) {
	for _, tc := range []struct{ name, js string }{
		{"loopingUnload", `addEventListener("beforeunload", e => { for (;;) {} }), 1`},
	} {
		for _, how := range []string{"closeTarget", "leave"} {
			t.Run(tc.name+"/"+how, func(t *testing.T) {
				c := dialRaw(t)
				tid, sid := c.open(site.URL + "/form?loopingunload-" + tc.name + "-" + how)
				closeUserTab(t, tid)
				c.eval(sid, `document.readyState === "complete" || new Promise(r => onload = r)`)
				c.eval(sid, tc.js)
				time.Sleep(500 * time.Millisecond)
				if how == "leave" {
					c.ws.CloseNow()
				} else {
					start := time.Now()
					res, err := c.call("", "Target.closeTarget", map[string]any{"targetId": tid})
					took := time.Since(start)
					t.Logf("Target.closeTarget: %s %v in %v", res, err, took.Round(time.Millisecond))
					if took > 10*time.Second {
						t.Errorf("Target.closeTarget answered after %v", took)
					}
				}
				if stillOpenAfter(t, tid, 20*time.Second) {
					t.Errorf("the client's own tab showing a %s is still open 20 s after %s", tc.name, how)
				}
			})
		}
	}
}
