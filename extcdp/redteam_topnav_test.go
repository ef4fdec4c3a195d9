package extcdp_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamFrameTakesTheTopOutside: the allowed page of a client held
// to its domains embeds a frame of another site; the client clicks into
// it (as an agent clicks what it sees), and the frame, with that user
// activation, sends the whole tab to its own site. The extension's rules
// held loads that pages of the domains start, not those of a frame from
// elsewhere: the tab loaded the outside page, and before the relay heard
// the tab's new URL the client read it (2 of 3 runs); the commit then
// ended its session first (0 of 3), and now, in a tab the client opened,
// the rules hold the load before it leaves.
func TestRedTeamFrameTakesTheTopOutside(t *testing.T) {
	var outside atomic.Int64
	var all atomic.Int64
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		all.Add(1)
		if r.URL.Path == "/secret" {
			outside.Add(1)
			fmt.Fprint(w, "<title>outside-secret</title>outside")
			return
		}
		fmt.Fprint(w, `<body style="margin:0"><button id=b style="width:300px;height:300px" onclick="top.location='/secret'">go</button></body>`)
	}))
	defer evil.Close()
	// 127.0.0.1 is allowed; the frame is at localhost, another site.
	frameURL := strings.Replace(evil.URL, "127.0.0.1", "localhost", 1) + "/frame"
	srv, tok := endpoint(t)
	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}})
	_, sid := a.open(site.URL + "/form?top-from-frame")
	a.must(sid, "Page.enable", nil)
	a.eval(sid, `new Promise(ok => {
		document.body.innerHTML = '';
		const f = document.createElement('iframe');
		f.style = 'position:absolute;left:0;top:0;width:400px;height:400px;border:0';
		f.onload = () => ok('loaded');
		f.src = '`+frameURL+`';
		document.body.appendChild(f);
	})`)
	time.Sleep(500 * time.Millisecond)
	for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
		a.must(sid, "Input.dispatchMouseEvent", map[string]any{"type": typ, "x": 100, "y": 100, "button": "left", "clickCount": 1})
	}
	read := ""
	for range 80 {
		m, err := a.send(sid, "Runtime.evaluate", map[string]any{"expression": "location.href + ' ' + document.title", "returnByValue": true})
		if err != nil || m.Error != nil {
			if m.Error != nil {
				t.Logf("the client's read after the click: %s", m.Error.Message)
			}
			break
		}
		if strings.Contains(string(m.Result), "outside-secret") {
			read = string(m.Result)
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Logf("the outside page was requested %d times (%d requests in all)", outside.Load(), all.Load())
	if n := outside.Load(); n != 0 {
		t.Errorf("the outside page was requested %d times: the tab the client opened left its domains", n)
	}
	if read != "" {
		t.Errorf("a client held to 127.0.0.1 read the page a frame of another site sent its tab to: %s", read)
	}
}
