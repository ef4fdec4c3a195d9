package extcdp_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestRedTeamFloodedNotesKeepOthersObjects: B makes the relay note 100,000 ids of its own
// in a few commands (getProperties of arrays of objects); A's id, noted
// first, becomes anyone's and B reads it.
func TestRedTeamFloodedNotesKeepOthersObjects(t *testing.T) {
	a, b, sa, sb := sharedTab(t, "/form?shid-evict")
	secret := fmt.Sprintf("shid-evict-secret-%d", time.Now().UnixNano())
	aid := sharedObjID(a.must(sa, "Runtime.evaluate", map[string]any{"expression": `({token: "` + secret + `"})`}))
	if _, err := b.call(sb, "Runtime.getProperties", map[string]any{"objectId": aid, "ownProperties": true}); err == nil {
		t.Fatal("control: B read A's object before flooding; the fix is not in this build")
	}
	start := time.Now()
	for i := 0; i < 6; i++ {
		arr := sharedObjID(b.must(sb, "Runtime.evaluate", map[string]any{"expression": `Array.from({length: 20000}, (_, i) => ({i}))`}))
		res, err := b.call(sb, "Runtime.getProperties", map[string]any{"objectId": arr, "ownProperties": true})
		if err != nil {
			t.Fatalf("flood %d: %v", i, err)
		}
		t.Logf("flood %d: %d bytes", i, len(res))
	}
	got, err := b.call(sb, "Runtime.getProperties", map[string]any{"objectId": aid, "ownProperties": true})
	if err == nil && strings.Contains(string(got), secret) {
		t.Errorf("after noting 120,000 ids of B's in 12 commands (%v), B read A's object %s: %.120s", time.Since(start).Round(time.Millisecond), aid, got)
	}
}
