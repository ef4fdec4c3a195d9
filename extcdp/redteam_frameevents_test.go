package extcdp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamFrameEventsOutsideTheDomains: a client held to its domains
// auto-attaches to a frame before it loads (its URL is empty then, so its
// commands pass), enables the frame's domains and lets it load a site
// outside the domains: the frame's events named the outside page and
// carried what it loads and logs (Page.frameNavigated, the origin of its
// context, Network's events, its console). The frame still loads.
func TestRedTeamFrameEventsOutsideTheDomains(t *testing.T) {
	srv, tok := endpoint(t)
	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}})
	_, sid := a.open(site.URL + "/form?frame-events")
	a.eval(sid, "1")
	a.must(sid, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true})
	loaded := make(chan string, 1)
	go func() {
		m, _ := a.send(sid, "Runtime.evaluate", map[string]any{"expression": `new Promise(ok => {
			const f = document.createElement('iframe');
			f.onload = () => ok('loaded');
			f.src = '` + site.CrossURL + `/form?outside-events';
			document.body.appendChild(f);
		})`, "awaitPromise": true, "returnByValue": true})
		loaded <- string(m.Result)
	}()
	var child string
	timeout := time.After(10 * time.Second)
	for child == "" {
		select {
		case ev := <-a.evs:
			if ev.Method == "Target.attachedToTarget" && ev.SessionID == sid && strings.Contains(string(ev.Params), `"iframe"`) {
				child = field(ev.Params, "sessionId")
			}
		case <-timeout:
			t.Fatal("no child session was announced for the frame in 10 s")
		}
	}
	for _, m := range []string{"Network.enable", "Runtime.enable", "Page.enable", "Log.enable", "Runtime.runIfWaitingForDebugger"} {
		res, err := a.call(child, m, nil)
		t.Logf("%s before the frame loads: %s %v", m, res, err)
	}
	select {
	case got := <-loaded:
		if !strings.Contains(got, "loaded") {
			t.Fatalf("the frame did not load: %s", got)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the frame did not load in 15 s")
	}
	time.Sleep(time.Second) // the frame's last events
	a.mu.Lock()
	defer a.mu.Unlock()
	cross := strings.TrimPrefix(site.CrossURL, "http://")
	n := 0
	for _, e := range a.events {
		if e.SessionID != child {
			continue
		}
		n++
		if strings.Contains(string(e.Params), cross) || strings.Contains(string(e.Params), "outside-events") {
			t.Errorf("an event of the frame outside the domains reached the client: %s %.300s", e.Method, e.Params)
		}
	}
	t.Logf("%d events of the frame's session reached the client", n)
}
