package extcdp_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRedTeamPausedScopesOfAnother: A debugs the shared tab and pauses
// in a function of its own evaluation, whose local holds A's secret. B,
// which never enabled Debugger and so heard no Debugger.paused, guesses the
// scope objects' ids (numbered as every object) and reads A's locals.
func TestRedTeamPausedScopesOfAnother(t *testing.T) {
	a, b, sa, sb := sharedTab(t, "/form?shid-paused")
	secret := fmt.Sprintf("shid-paused-secret-%d", time.Now().UnixNano())
	a.must(sa, "Debugger.enable", nil)
	t.Cleanup(func() { a.call(sa, "Debugger.resume", nil); a.call(sa, "Debugger.disable", nil) })
	bid := sharedObjID(b.must(sb, "Runtime.evaluate", map[string]any{"expression": `({mine: 1})`}))
	go a.call(sa, "Runtime.evaluate", map[string]any{"expression": `(function shidFn() { var shidLocal = "` + secret + `"; debugger; return shidLocal.length })()`})
	deadline := time.Now().Add(10 * time.Second)
	for !a.hasEvent("Debugger.paused", "") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if !a.hasEvent("Debugger.paused", "") {
		t.Fatal("A never paused; the test shows nothing")
	}
	var ids []string
	a.mu.Lock()
	for _, e := range a.events {
		if e.Method == "Debugger.paused" {
			s := string(e.Params)
			for {
				i := strings.Index(s, `"objectId":"`)
				if i < 0 {
					break
				}
				s = s[i+len(`"objectId":"`):]
				ids = append(ids, s[:strings.IndexByte(s, '"')])
			}
		}
	}
	a.mu.Unlock()
	t.Logf("A's paused scope ids: %v; B's own %s; B heard paused: %v", ids, bid, b.hasEvent("Debugger.paused", ""))
	dot := strings.LastIndex(bid, ".")
	n, _ := strconv.Atoi(bid[dot+1:])
	for i := n + 1; i <= n+30; i++ {
		id := bid[:dot+1] + strconv.Itoa(i)
		got, err := b.call(sb, "Runtime.getProperties", map[string]any{"objectId": id, "ownProperties": true})
		if err == nil && strings.Contains(string(got), secret) {
			t.Errorf("B, deaf to Debugger.paused, read A's paused local through object %s", id)
			break
		}
	}
	// And by the call frame's id.
	var p struct {
		CallFrames []struct {
			CallFrameID string `json:"callFrameId"`
		} `json:"callFrames"`
	}
	a.mu.Lock()
	for _, e := range a.events {
		if e.Method == "Debugger.paused" {
			json.Unmarshal(e.Params, &p)
		}
	}
	a.mu.Unlock()
	if len(p.CallFrames) > 0 {
		got, err := b.call(sb, "Debugger.evaluateOnCallFrame", map[string]any{"callFrameId": p.CallFrames[0].CallFrameID, "expression": "shidLocal", "returnByValue": true})
		t.Logf("B's evaluateOnCallFrame %s: %s %v", p.CallFrames[0].CallFrameID, got, err)
		if strings.Contains(string(got), secret) {
			t.Errorf("B read A's paused local by the call frame id %s", p.CallFrames[0].CallFrameID)
		}
	}
}
