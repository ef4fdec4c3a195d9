package extcdp_test

import (
	"strings"
	"testing"
	"time"
)

// frameChildOf puts a cross-site frame into the session's page and waits
// for c's child session of it.
func frameChildOf(t *testing.T, c *rawClient, sid, tag string, add bool) string {
	t.Helper()
	c.must(sid, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
	if add {
		c.eval(sid, `new Promise(ok => {
			const f = document.createElement('iframe');
			f.onload = () => ok('loaded');
			f.src = '`+site.CrossURL+`/form?`+tag+`';
			document.body.appendChild(f);
		})`)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		for _, e := range c.events {
			if e.Method == "Target.attachedToTarget" && e.SessionID == sid && strings.Contains(string(e.Params), `"iframe"`) {
				c.mu.Unlock()
				return field(e.Params, "sessionId")
			}
		}
		c.mu.Unlock()
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no child session of the frame %s", tag)
	return ""
}

func childWorks(c *rawClient, child string) error {
	_, err := c.call(child, "Runtime.evaluate", map[string]any{"expression": "location.href", "returnByValue": true})
	return err
}

// TestRedTeamSharedTabChildSessionsOfAnother: A and B both use the
// person's tab, which has a cross-site frame. B drives the frame through its
// child session. A then turns auto-attach off on its own session of the
// tab, or detaches the frame's session by id: Chrome has one attachment
// per tab, so the frame's session that B uses must not go with A's (it
// did, 5 of 5, before keepOthersFrames).
func TestRedTeamSharedTabChildSessionsOfAnother(t *testing.T) {
	for _, how := range []string{"autoAttachOff", "detachChild"} {
		t.Run(how, func(t *testing.T) {
			a, b, sa, sb := sharedTab(t, "/form?shared-"+how)
			tag := "frame-" + how
			cb := frameChildOf(t, b, sb, tag, true)
			if err := childWorks(b, cb); err != nil {
				t.Fatalf("B's frame session before: %v", err)
			}
			switch how {
			case "autoAttachOff":
				res, err := a.call(sa, "Target.setAutoAttach", map[string]any{"autoAttach": false, "waitForDebuggerOnStart": false, "flatten": true})
				t.Logf("A's setAutoAttach false: %.200s %v", res, err)
			case "detachChild":
				ca := frameChildOf(t, a, sa, tag, false)
				t.Logf("A's child %s, B's child %s", ca, cb)
				for _, p := range []map[string]any{{"sessionId": ca}, {"sessionId": cb}} {
					res, err := a.call(sa, "Target.detachFromTarget", p)
					t.Logf("A's detachFromTarget %v on its tab session: %.200s %v", p, res, err)
					res, err = a.call("", "Target.detachFromTarget", p)
					t.Logf("A's detachFromTarget %v at the root: %.200s %v", p, res, err)
				}
			}
			time.Sleep(time.Second)
			if err := childWorks(b, cb); err != nil {
				t.Errorf("after A's %s, B's frame session fails: %v", how, err)
			}
			b.mu.Lock()
			for _, e := range b.events {
				if e.Method == "Target.detachedFromTarget" && strings.Contains(string(e.Params), cb) {
					t.Errorf("after A's %s, B was told its frame session ended: %s", how, e.Params)
				}
			}
			b.mu.Unlock()
		})
	}
}
