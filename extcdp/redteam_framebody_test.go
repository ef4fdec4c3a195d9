package extcdp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamFrameBodyThroughTheTab: the network events of a frame's
// document come partly on its tab's session; a client held to its domains
// asks there for the body of an outside frame's document, and for the
// pierced DOM. Held: Chrome keeps the body and the document with the
// frame's own session (the tab's events name the frame's URL only).
func TestRedTeamFrameBodyThroughTheTab(t *testing.T) {
	srv, tok := endpoint(t)
	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}})
	_, sid := a.open(site.URL + "/form?frame-body")
	a.eval(sid, "1")
	a.must(sid, "Network.enable", nil)
	a.must(sid, "Page.enable", nil)
	a.eval(sid, `new Promise(ok => {
		const f = document.createElement('iframe');
		f.onload = () => ok('loaded');
		f.src = '`+site.CrossURL+`/form?outside-body';
		document.body.appendChild(f);
	})`)
	time.Sleep(500 * time.Millisecond)
	a.mu.Lock()
	var ids []string
	for _, e := range a.events {
		if e.SessionID == sid && strings.Contains(string(e.Params), "outside-body") {
			t.Logf("tab event naming the frame's page: %s %.200s", e.Method, e.Params)
			if e.Method == "Network.responseReceived" || e.Method == "Network.requestWillBeSent" {
				ids = append(ids, field(e.Params, "requestId"))
			}
		}
	}
	a.mu.Unlock()
	for _, id := range ids {
		res, err := a.call(sid, "Network.getResponseBody", map[string]any{"requestId": id})
		t.Logf("getResponseBody %s: %.200s %v", id, res, err)
		if err == nil && strings.Contains(string(res), "form") {
			t.Errorf("a client held to 127.0.0.1 read the body of a frame's page outside them through its tab: %.200s", res)
		}
	}
	for _, m := range []struct {
		method string
		params map[string]any
	}{
		{"Page.getResourceTree", nil},
		{"DOM.getDocument", map[string]any{"depth": -1, "pierce": true}},
	} {
		res, err := a.call(sid, m.method, m.params)
		t.Logf("%s: %v", m.method, err)
		if strings.Contains(string(res), `"documentURL":"`+site.CrossURL) {
			t.Errorf("%s: %.300s", m.method, res)
		}
	}
}
