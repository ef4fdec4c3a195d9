package extcdp_test

import (
	"encoding/base64"
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
	dot := strings.LastIndex(bid, ".")
	n, err := strconv.Atoi(bid[dot+1:])
	if dot < 0 || err != nil {
		t.Fatalf("id %q not numbered", bid)
	}
	found := ""
	for i := n - 1; i >= max(1, n-30) && found == ""; i-- {
		id := bid[:dot+1] + strconv.Itoa(i)
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

// TestRedTeamStreamOutsideTakenByValue: as TestRedTeamStreamOfAPageOutsideTheDomains,
// but B, held to 127.0.0.1, first claims each handle by returning
// {stream: "N"} by value: it reads the PDF of the person's page outside its
// domains.
func TestRedTeamStreamOutsideTakenByValue(t *testing.T) {
	const secret = "shid-hijack-outside-title-7d2a"
	srv, tok := endpoint(t)
	person := personsTab(t, site.CrossURL+"/form?shid-hijack-outside")
	a := dialRawTo(t, srv, tok)
	sa := a.attach(person)
	a.eval(sa, `document.title = "`+secret+`", 1`)
	handle := field(a.must(sa, "Page.printToPDF", map[string]any{"transferMode": "ReturnAsStream"}), "stream")
	a.must(sa, "Page.navigate", map[string]any{"url": site.URL + "/form?shid-hijack-allowed"})
	for i := 0; !strings.Contains(a.eval(sa, "location.href"), "shid-hijack-allowed"); i++ {
		if i == 100 {
			t.Fatal("the tab did not go to the allowed page")
		}
		time.Sleep(100 * time.Millisecond)
	}
	a.eval(sa, "document.readyState")
	b := dialRawTo(t, srv, tok)
	b.must("", "Livetab.setPolicy", map[string]any{"domains": []string{"127.0.0.1"}})
	var sb string
	for i := 0; ; i++ {
		if i == 50 {
			t.Fatal("B could not attach at the allowed page")
		}
		res, err := b.call("", "Target.attachToTarget", map[string]any{"targetId": person, "flatten": true})
		if err == nil {
			sb = field(res, "sessionId")
			if at, err := b.call(sb, "Runtime.evaluate", map[string]any{"expression": "location.href", "returnByValue": true}); err == nil && strings.Contains(string(at), "shid-hijack-allowed") {
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.call(sb, "Runtime.evaluate", map[string]any{"expression": `({stream: "` + handle + `"})`, "returnByValue": true})
	var all []byte
	for range 2000 {
		got, err := b.call(sb, "IO.read", map[string]any{"handle": handle, "size": 1 << 16})
		if err != nil {
			t.Logf("IO.read: %v", err)
			break
		}
		var r struct {
			Data string `json:"data"`
			B64  bool   `json:"base64Encoded"`
			EOF  bool   `json:"eof"`
		}
		json.Unmarshal(got, &r)
		if r.B64 {
			d, _ := base64.StdEncoding.DecodeString(r.Data)
			all = append(all, d...)
		} else {
			all = append(all, r.Data...)
		}
		if r.EOF {
			break
		}
	}
	if strings.Contains(string(all), secret) {
		t.Errorf("B, held to 127.0.0.1, claimed stream %s by value and read the PDF of the person's page outside its domains (title %q)", handle, secret)
	}
}
