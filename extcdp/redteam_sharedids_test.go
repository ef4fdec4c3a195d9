package extcdp_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/livetabcdp"
)

// Objects, streams and traces on a tab the person opened, which two
// clients use at once (red team): each is its client's (owned.go).

// TestRedTeamStreamOfAnotherOnASharedTab: A prints the person's tab, which B
// uses too, to a stream (Page.printToPDF ReturnAsStream). B guesses the
// stream's handle (Chrome numbers them) and reads it on its own session of
// the same tab, then closes it: A's stream is A's, B must neither read nor
// take it away.
func TestRedTeamStreamOfAnotherOnASharedTab(t *testing.T) {
	a, b, sa, sb := sharedTab(t, "/form?shared-ids-stream")
	handle := field(a.must(sa, "Page.printToPDF", map[string]any{"transferMode": "ReturnAsStream"}), "stream")
	t.Logf("A's stream handle: %q", handle)
	// B guesses: the handles near any it can think of.
	var readByB string
	cands := []string{handle}
	if n, err := strconv.Atoi(handle); err == nil {
		cands = nil
		for i := max(1, n-5); i <= n+5; i++ {
			cands = append(cands, strconv.Itoa(i))
		}
	}
	for _, h := range cands {
		got, err := b.call(sb, "IO.read", map[string]any{"handle": h, "size": 64})
		if err == nil && strings.Contains(string(got), `"data"`) {
			readByB = h
			t.Logf("B's IO.read of %s: %.150s", h, got)
			break
		}
	}
	if readByB != "" {
		t.Errorf("B read A's stream %s on the shared tab", readByB)
	}
	for _, h := range cands {
		b.call(sb, "IO.close", map[string]any{"handle": h})
	}
	if got, err := a.call(sa, "IO.read", map[string]any{"handle": handle, "size": 64}); err != nil || !strings.Contains(string(got), `"data"`) {
		t.Errorf("after B's IO.close, A cannot read its own stream: %s %v", got, err)
	}
	// B's own stream is B's.
	mine := field(b.must(sb, "Page.printToPDF", map[string]any{"transferMode": "ReturnAsStream"}), "stream")
	if got, err := b.call(sb, "IO.read", map[string]any{"handle": mine, "size": 64}); err != nil || !strings.Contains(string(got), `"data"`) {
		t.Errorf("B cannot read its own stream %s: %s %v", mine, got, err)
	}
}

// TestRedTeamObjectOfAnotherOnASharedTab: A evaluates an object holding a
// value of its own (nothing of the page has it) on the person's tab, which B
// uses too. B, knowing how Chrome numbers remote objects (its own object's
// id with a smaller counter), reads A's object and releases it.
func TestRedTeamObjectOfAnotherOnASharedTab(t *testing.T) {
	a, b, sa, sb := sharedTab(t, "/form?shared-ids-objects")
	secret := fmt.Sprintf("secret-of-A-%d", time.Now().UnixNano())
	aid := sharedObjID(a.must(sa, "Runtime.evaluate", map[string]any{"expression": `({token: "` + secret + `"})`}))
	grouped := sharedObjID(a.must(sa, "Runtime.evaluate", map[string]any{"expression": `({grouped: 1})`, "objectGroup": "of-A"}))
	t.Logf("A's object: %s", aid)
	bid := sharedObjID(b.must(sb, "Runtime.evaluate", map[string]any{"expression": `({mine: 1})`}))
	t.Logf("B's object: %s", bid)
	found := ""
	for _, id := range idsBefore(t, bid) {
		got, err := b.call(sb, "Runtime.getProperties", map[string]any{"objectId": id, "ownProperties": true})
		if err == nil && strings.Contains(string(got), secret) {
			found = id
		}
	}
	if found != "" {
		t.Errorf("B read A's object %s (A's %s) on the shared tab: it holds %q", found, aid, secret)
	}
	b.call(sb, "Runtime.releaseObject", map[string]any{"objectId": aid})
	b.call(sb, "Runtime.callFunctionOn", map[string]any{"objectId": aid, "functionDeclaration": "function() { this.token = 'B was here' }"})
	b.call(sb, "Runtime.releaseObjectGroup", map[string]any{"objectGroup": "of-A"})
	if got, err := a.call(sa, "Runtime.getProperties", map[string]any{"objectId": aid, "ownProperties": true}); err != nil || !strings.Contains(string(got), secret) {
		t.Errorf("after B released it, A cannot use its own object: %s %v", got, err)
	}
	if got, err := a.call(sa, "Runtime.getProperties", map[string]any{"objectId": grouped, "ownProperties": true}); err != nil || !strings.Contains(string(got), "grouped") {
		t.Errorf("after B released A's object group, A cannot use its object: %s %v", got, err)
	}
	// B's own object is B's.
	if got, err := b.call(sb, "Runtime.getProperties", map[string]any{"objectId": bid, "ownProperties": true}); err != nil || !strings.Contains(string(got), "mine") {
		t.Errorf("B cannot use its own object: %s %v", got, err)
	}
}

// TestRedTeamTraceOfAnotherOnASharedTab: A traces the person's tab, which B uses
// too. B's Tracing.end on its own session must not end A's trace, nor hand
// B A's trace.
func TestRedTeamTraceOfAnotherOnASharedTab(t *testing.T) {
	a, b, sa, sb := sharedTab(t, "/form?shared-ids-trace")
	a.must(sa, "Tracing.start", map[string]any{"transferMode": "ReturnAsStream", "categories": "devtools.timeline"})
	t.Cleanup(func() { a.call(sa, "Tracing.end", nil) })
	a.eval(sa, `console.log("A-traced-work"), 1`)
	_, err := b.call(sb, "Tracing.end", nil)
	t.Logf("B's Tracing.end: %v", err)
	time.Sleep(2 * time.Second)
	if a.hasEvent("Tracing.tracingComplete", "") {
		t.Errorf("B's Tracing.end ended A's trace (A got Tracing.tracingComplete without ending it)")
	}
	if b.hasEvent("Tracing.tracingComplete", "") || b.hasEvent("Tracing.dataCollected", "") {
		t.Errorf("B heard A's trace")
	}
}

// TestRedTeamStreamOfAPageOutsideTheDomains: the person's tab is at a page
// outside B's domains; A (no policy) prints it to a stream there, then the
// tab goes to a page inside B's domains. B, held to 127.0.0.1, attaches and
// reads the stream by its guessed handle, or after claiming each handle by
// returning {stream: "N"} by value (which a first cut took for B's own):
// the printed page outside its domains.
func TestRedTeamStreamOfAPageOutsideTheDomains(t *testing.T) {
	for _, claim := range []bool{false, true} {
		t.Run(fmt.Sprintf("claimed-by-value=%v", claim), func(t *testing.T) {
			secret := fmt.Sprintf("shared-ids-outside-title-%v", claim)
			b, sb, handle := outsideStream(t, secret)
			for h := 1; h <= 10; h++ {
				if claim {
					b.call(sb, "Runtime.evaluate", map[string]any{"expression": fmt.Sprintf(`({stream: "%d"})`, h), "returnByValue": true})
				}
				if all := readStream(b, sb, strconv.Itoa(h)); strings.Contains(string(all), secret) {
					t.Errorf("B, held to 127.0.0.1, read stream %d (A's is %s): the PDF of the person's page outside its domains (title %q)", h, handle, secret)
				}
			}
		})
	}
}

// outsideStream has A print the person's tab at a page outside B's
// domains, titled secret, to a stream, then take the tab into them; B,
// held to 127.0.0.1, is attached there. It returns B, its session and A's
// stream's handle.
func outsideStream(t *testing.T, secret string) (b *rawClient, sb, handle string) {
	t.Helper()
	srv, tok := endpoint(t)
	person := personsTab(t, site.CrossURL+"/form?shared-ids-outside")
	a := dialRawTo(t, srv, tok)
	sa := a.attach(person)
	a.eval(sa, `document.title = "`+secret+`", 1`)
	handle = field(a.must(sa, "Page.printToPDF", map[string]any{"transferMode": "ReturnAsStream"}), "stream")
	a.must(sa, "Page.navigate", map[string]any{"url": site.URL + "/form?shared-ids-allowed"})
	for i := 0; !strings.Contains(a.eval(sa, "location.href"), "shared-ids-allowed"); i++ {
		if i == 100 {
			t.Fatal("the tab did not go to the allowed page")
		}
		time.Sleep(100 * time.Millisecond)
	}
	a.eval(sa, "document.readyState")
	b = dialRawTo(t, srv, tok)
	b.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}})
	for i := 0; ; i++ {
		if i == 50 {
			t.Fatal("B could not attach at the allowed page")
		}
		res, err := b.call("", "Target.attachToTarget", map[string]any{"targetId": person, "flatten": true})
		if err == nil {
			sb = field(res, "sessionId")
			if at, err := b.call(sb, "Runtime.evaluate", map[string]any{"expression": "location.href", "returnByValue": true}); err == nil && strings.Contains(string(at), "shared-ids-allowed") {
				return b, sb, handle
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// readStream reads the stream handle on c's session sid to its end, or to
// the first error.
func readStream(c *rawClient, sid, handle string) []byte {
	var all []byte
	for range 2000 {
		got, err := c.call(sid, "IO.read", map[string]any{"handle": handle, "size": 1 << 16})
		if err != nil {
			return all
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
			return all
		}
	}
	return all
}

// idsBefore are the object ids Chrome gave before id on its attachment, the
// nearest first: V8 numbers them "isolate.context.N".
func idsBefore(t *testing.T, id string) []string {
	t.Helper()
	dot := strings.LastIndex(id, ".")
	n, err := strconv.Atoi(id[dot+1:])
	if dot < 0 || err != nil {
		t.Fatalf("object id %q is not numbered as expected: this test shows nothing", id)
	}
	var ids []string
	for i := n - 1; i >= max(1, n-30); i-- {
		ids = append(ids, id[:dot+1]+strconv.Itoa(i))
	}
	return ids
}
