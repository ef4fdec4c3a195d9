package extcdp_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/internal/testsite"
	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamFrameEventsOutsideTheDomains: a client held to its domains
// auto-attaches to a frame before it loads (its URL is empty then, so its
// commands pass), enables the frame's domains and lets it load a site
// outside the domains: the frame's events carried what its page loads and
// logs (Network's events, its console, Log). Those of its life (where it
// is, its contexts, its load) still come; the frame still loads.
func TestRedTeamFrameEventsOutsideTheDomains(t *testing.T) {
	outside := testsite.NewCounter(t, "127.0.0.1", `<title>outside</title><script>console.log("secret-console"); fetch("/data?secret-fetch"); setTimeout(() => { throw new Error("secret-exception") }, 0)</script>`)
	outsideURL := strings.Replace(outside.URL, "127.0.0.1", "localhost", 1) + "/page?outside-events"
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
			f.src = '` + outsideURL + `';
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
	n := 0
	for _, e := range a.events {
		if e.SessionID != child {
			continue
		}
		n++
		if strings.Contains(string(e.Params), "secret-") || strings.HasPrefix(e.Method, "Network.") || strings.HasPrefix(e.Method, "Log.") {
			t.Errorf("an event of the frame's page outside the domains reached the client: %s %.300s", e.Method, e.Params)
		}
	}
	if outside.Hits.Load() < 2 {
		t.Errorf("the outside frame's page did not run (%d requests)", outside.Hits.Load())
	}
	t.Logf("%d events of the frame's session reached the client", n)
}

// TestFrameInFrameOutsideIsLetGo: a client held to its domains
// auto-attaches with waitForDebuggerOnStart, as Playwright does, on its
// tab and on each frame before it loads. A frame outside its domains has
// a frame of the domains in it, which Chrome holds until the client lets
// it go: the client must hear of it, or it waits forever.
func TestFrameInFrameOutsideIsLetGo(t *testing.T) {
	inner := site.URL + "/form?nested-inside"
	outer := testsite.NewCounter(t, "127.0.0.1", `<title>outer</title><iframe src="`+inner+`"></iframe>`)
	outerURL := strings.Replace(outer.URL, "127.0.0.1", "localhost", 1) + "/outer"
	srv, tok := endpoint(t)
	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}})
	_, sid := a.open(site.URL + "/form?nested-top")
	a.eval(sid, "1")
	wait := map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true}
	a.must(sid, "Target.setAutoAttach", wait)
	go a.send(sid, "Runtime.evaluate", map[string]any{"expression": `const f = document.createElement('iframe'); f.src = '` + outerURL + `'; document.body.appendChild(f); 1`})
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ev := <-a.evs:
			if ev.Method != "Target.attachedToTarget" || !strings.Contains(string(ev.Params), `"iframe"`) {
				continue
			}
			s := field(ev.Params, "sessionId")
			go func() {
				for _, m := range []string{"Page.enable", "Runtime.enable", "Network.enable"} {
					a.send(s, m, nil)
				}
				a.send(s, "Target.setAutoAttach", wait)
				a.send(s, "Runtime.runIfWaitingForDebugger", nil)
			}()
			if ev.SessionID == sid {
				continue // the outer frame
			}
			last := ""
			for range 100 {
				m, err := a.send(s, "Runtime.evaluate", map[string]any{"expression": "location.href", "returnByValue": true})
				if err == nil && m.Error == nil && strings.Contains(string(m.Result), "nested-inside") {
					return
				}
				last = fmt.Sprintf("%s %v %+v", m.Result, err, m.Error)
				time.Sleep(100 * time.Millisecond)
			}
			t.Fatalf("the frame inside the outside frame never loaded: %s (%s)", last, ev.Params)
		case <-timeout:
			t.Fatal("the client never heard of the frame of its domains inside the outside frame in 20 s: it waits for the debugger forever")
		}
	}
}
