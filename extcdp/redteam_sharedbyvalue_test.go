package extcdp_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

func sharedObjID(v []byte) string {
	var r struct {
		Result struct {
			ObjectID string `json:"objectId"`
		} `json:"result"`
	}
	json.Unmarshal(v, &r)
	return r.Result.ObjectID
}

// TestRedTeamIDsTakenByValue: B returns by value an object whose key
// "objectId" holds A's id. The relay notes each "objectId":"…" of a
// reply as the client's, overwriting A's: B then owns A's object.
func TestRedTeamIDsTakenByValue(t *testing.T) {
	a, b, sa, sb := sharedTab(t, "/form?shid-hijack")
	secret := fmt.Sprintf("shid-secret-%d", time.Now().UnixNano())
	aid := sharedObjID(a.must(sa, "Runtime.evaluate", map[string]any{"expression": `({token: "` + secret + `"})`}))
	stream := field(a.must(sa, "Page.printToPDF", map[string]any{"transferMode": "ReturnAsStream"}), "stream")
	bid := sharedObjID(b.must(sb, "Runtime.evaluate", map[string]any{"expression": `({mine: 1})`}))
	t.Logf("A %s B %s A's stream %s", aid, bid, stream)
	found := ""
	for _, id := range idsBefore(t, bid) {
		b.call(sb, "Runtime.evaluate", map[string]any{"expression": `({objectId: "` + id + `"})`, "returnByValue": true})
		got, err := b.call(sb, "Runtime.getProperties", map[string]any{"objectId": id, "ownProperties": true})
		if err == nil && strings.Contains(string(got), secret) {
			found = id
		}
	}
	if found != "" {
		t.Errorf("B took A's object %s by returning {objectId: %q} by value, and read %q", found, found, secret)
	}
	if sn, err := strconv.Atoi(stream); err == nil {
		for h := max(1, sn-3); h <= sn+3; h++ {
			hs := strconv.Itoa(h)
			b.call(sb, "Runtime.evaluate", map[string]any{"expression": `({stream: "` + hs + `"})`, "returnByValue": true})
			got, err := b.call(sb, "IO.read", map[string]any{"handle": hs, "size": 64})
			if err == nil && strings.Contains(string(got), `"data"`) {
				t.Errorf("B took A's stream %s by returning {stream: %q} by value: %.100s", hs, hs, got)
			}
		}
	}
}
