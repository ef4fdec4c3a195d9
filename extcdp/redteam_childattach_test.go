package extcdp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamFrameOfARefusedTab: client B (no policy) auto-attaches on a
// tab the person opened, which has a cross-site frame: the frame's target
// is then known to the relay. Client A may use only the tabs the person
// shared, and the person did not share this one; A finds the frame's
// target in Target.getTargets and attaches to it by its id. The attach of
// a frame skipped the policy check of its tab: A drove the person's
// unshared tab's frame.
func TestRedTeamFrameOfARefusedTab(t *testing.T) {
	srv, tok := endpoint(t)
	person := userTab(t, site.URL+"/frames?unshared")
	closeUserTab(t, person)
	b := dialRawTo(t, srv, tok)
	sb := b.attach(person)
	b.must(sb, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})

	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"sharedOnly": true})
	if res, err := a.call("", "Target.attachToTarget", map[string]any{"targetId": person, "flatten": true}); err == nil {
		t.Fatalf("A attached to the person's unshared tab: %s", res)
	}
	var frame string
	for range 50 {
		for _, info := range targetInfos(t, a) {
			if info.Type == "iframe" && strings.HasPrefix(info.URL, site.CrossURL) {
				frame = info.TargetID
			}
		}
		if frame != "" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if frame == "" {
		t.Logf("A does not see the frame of the unshared tab")
		return
	}
	res, err := a.call("", "Target.attachToTarget", map[string]any{"targetId": frame, "flatten": true})
	if err != nil {
		if !strings.Contains(err.Error(), "not shared") {
			t.Errorf("attach to the frame of the unshared tab: %v, want the policy's refusal", err)
		}
		return
	}
	s := field(res, "sessionId")
	got, err := a.call(s, "Runtime.evaluate", map[string]any{"expression": "location.href", "returnByValue": true})
	t.Errorf("A, kept to the tabs the person shared, attached to a frame of an unshared tab and ran: %s %v", got, err)
}
