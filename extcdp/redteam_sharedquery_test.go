package extcdp_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestRedTeamQueryObjectsOnASharedTab: A holds an object of its own
// evaluation. B queries every object with Object.prototype (its own
// prototype id) and reads A's out of its own array. Refused while another
// client uses the tab.
func TestRedTeamQueryObjectsOnASharedTab(t *testing.T) {
	a, b, sa, sb := sharedTab(t, "/form?shid-query")
	secret := fmt.Sprintf("shid-q-secret-%d", time.Now().UnixNano())
	a.must(sa, "Runtime.evaluate", map[string]any{"expression": `({shidToken: ["shid-q-", "` + strings.TrimPrefix(secret, "shid-q-") + `"].join("")})`})
	proto := sharedObjID(b.must(sb, "Runtime.evaluate", map[string]any{"expression": `Object.prototype`}))
	res, err := b.call(sb, "Runtime.queryObjects", map[string]any{"prototypeObjectId": proto})
	if err != nil {
		if !strings.Contains(err.Error(), "another program uses it") {
			t.Errorf("Runtime.queryObjects on a shared tab: %v, want the refusal that says why", err)
		}
		return
	}
	arr := ""
	if i := strings.Index(string(res), `"objectId":"`); i >= 0 {
		s := string(res)[i+len(`"objectId":"`):]
		arr = s[:strings.IndexByte(s, '"')]
	}
	got, err := b.call(sb, "Runtime.callFunctionOn", map[string]any{"objectId": arr, "returnByValue": true,
		"functionDeclaration": `function() { return this.filter(o => o && typeof o.shidToken === "string").map(o => o.shidToken) }`})
	t.Logf("B's find: %s %v", got, err)
	if strings.Contains(string(got), secret) {
		t.Errorf("B read A's object through Runtime.queryObjects: %s", got)
	}
}
