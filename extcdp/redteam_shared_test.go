package extcdp_test

import (
	"context"
	"strings"
	"testing"
	"time"
)

// sharedTab gives two endpoint clients a session each on one tab the
// person opened.
func sharedTab(t *testing.T, path string) (a, b *rawClient, sa, sb string) {
	t.Helper()
	srv, tok := endpoint(t)
	id := userTab(t, site.URL+path)
	t.Cleanup(func() {
		u, err := env.User(context.Background())
		if err == nil {
			u.CloseTab(context.Background(), id)
			u.Close()
		}
	})
	a, b = dialRawTo(t, srv, tok), dialRawTo(t, srv, tok)
	sa, sb = a.attach(id), b.attach(id)
	a.eval(sa, "1")
	b.eval(sb, "1")
	return a, b, sa, sb
}

// TestRedTeamLeftInterceptionWedgesNoTab: client A intercepts the requests
// of a tab the person opened (Fetch.enable), which client B uses too, then
// dies without a word. Chrome has one Fetch agent per attachment and the
// relay keeps the attachment for B: every request of the person's tab
// then waits for an answer that no one will give, the person's own clicks
// included, for as long as B stays.
func TestRedTeamLeftInterceptionWedgesNoTab(t *testing.T) {
	a, b, sa, sb := sharedTab(t, "/form?left-fetch")
	a.must(sa, "Fetch.enable", map[string]any{"patterns": []map[string]any{{"urlPattern": "*"}}})
	a.ws.CloseNow()
	<-a.closed
	time.Sleep(500 * time.Millisecond) // the endpoint notices the close
	b.bound = 15 * time.Second
	got, err := b.call(sb, "Runtime.evaluate", map[string]any{
		"expression":   "fetch('/form?after').then(r => r.status)",
		"awaitPromise": true, "returnByValue": true,
	})
	if err != nil || !strings.Contains(string(got), "200") {
		t.Fatalf("a request of the tab after A left: %s %v", got, err)
	}
}

// TestRedTeamInterceptionStaysWithItsClient: A intercepts the requests of
// a shared tab. B must neither hear of A's paused requests (it could
// answer them with a page of its own, or send A's navigation elsewhere)
// nor take A's interception away by enabling its own.
func TestRedTeamInterceptionStaysWithItsClient(t *testing.T) {
	a, b, sa, sb := sharedTab(t, "/form?own-fetch")
	a.must(sa, "Fetch.enable", map[string]any{"patterns": []map[string]any{{"urlPattern": "*after*"}}})
	t.Cleanup(func() { a.call(sa, "Fetch.disable", nil) })
	// B's own interception must not replace A's patterns.
	if _, err := b.call(sb, "Fetch.enable", map[string]any{"patterns": []map[string]any{{"urlPattern": "*nothing-matches*"}}}); err == nil {
		t.Cleanup(func() { b.call(sb, "Fetch.disable", nil) })
	}
	go b.call(sb, "Runtime.evaluate", map[string]any{"expression": "fetch('/form?after').then(r => r.status)", "awaitPromise": true})
	deadline := time.Now().Add(10 * time.Second)
	for !a.seen("/form?after") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if !a.seen("/form?after") {
		t.Errorf("B's Fetch.enable took A's interception away: A never saw the request paused")
	}
	b.mu.Lock()
	for _, e := range b.events {
		if strings.HasPrefix(e.Method, "Fetch.") {
			t.Errorf("B heard A's %s: %s", e.Method, e.Params)
		}
	}
	b.mu.Unlock()
}

// TestRedTeamLeftStateBreaksNoTab: client A puts the person's tab, which
// B uses too, into a state that breaks it — offline, its scripts off,
// every URL blocked, paused in the debugger — then dies. The person's tab
// must not stay broken while B stays attached.
func TestRedTeamLeftStateBreaksNoTab(t *testing.T) {
	for _, tc := range []struct {
		name string
		cmds [][2]any
	}{
		{"offline", [][2]any{{"Network.enable", nil}, {"Network.emulateNetworkConditions", map[string]any{"offline": true, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}}}},
		{"blocked", [][2]any{{"Network.enable", nil}, {"Network.setBlockedURLs", map[string]any{"urls": []string{"*"}}}}},
		{"scriptsOff", [][2]any{{"Emulation.setScriptExecutionDisabled", map[string]any{"value": true}}}},
		{"paused", [][2]any{{"Debugger.enable", nil}, {"Debugger.pause", nil}}},
		// The person's page can no longer keep its login.
		{"cookiesOff", [][2]any{{"Emulation.setDocumentCookieDisabled", map[string]any{"disabled": true}}}},
		// A script of A's on every new document of the person's tab.
		{"script", [][2]any{{"Page.enable", nil}, {"Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "window.setTimeout = () => 0"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b, sa, sb := sharedTab(t, "/form?left-"+tc.name)
			for _, c := range tc.cmds {
				a.must(sa, c[0].(string), c[1])
			}
			if tc.name == "paused" {
				// The pause takes at the page's next statement.
				go a.call(sa, "Runtime.evaluate", map[string]any{"expression": "1"})
				time.Sleep(300 * time.Millisecond)
			}
			a.ws.CloseNow()
			<-a.closed
			time.Sleep(500 * time.Millisecond)
			b.bound = 10 * time.Second
			if tc.name == "script" {
				b.must(sb, "Page.reload", nil)
				b.eval(sb, "document.readyState")
			}
			// The page runs a script of its own and loads something.
			got, err := b.call(sb, "Runtime.evaluate", map[string]any{
				"expression":   "new Promise(ok => setTimeout(ok, 10)).then(() => fetch('/form?after')).then(r => r.status)",
				"awaitPromise": true, "returnByValue": true,
			})
			if err != nil || !strings.Contains(string(got), `"value":200`) {
				t.Fatalf("the person's tab after A left: %s %v", got, err)
			}
			if got := b.eval(sb, `document.cookie = "left=1", document.cookie`); !strings.Contains(got, "left=1") {
				t.Fatalf("the person's page cannot set a cookie after A left: %q", got)
			}
		})
	}
}

// TestRedTeamLeftAutoAttachWedgesNoFrame: B asks the person's shared tab
// to hold each new frame until a debugger lets it run
// (waitForDebuggerOnStart), then dies. A cross-site frame the page then
// adds must still load.
func TestRedTeamLeftAutoAttachWedgesNoFrame(t *testing.T) {
	a, b, sa, sb := sharedTab(t, "/form?left-autoattach")
	b.must(sb, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true})
	b.ws.CloseNow()
	<-b.closed
	time.Sleep(500 * time.Millisecond)
	a.bound = 15 * time.Second
	got, err := a.call(sa, "Runtime.evaluate", map[string]any{
		"expression": `new Promise(ok => {
			const f = document.createElement('iframe');
			f.onload = () => ok('loaded');
			f.src = '` + site.CrossURL + `/form?frame';
			document.body.appendChild(f);
		})`,
		"awaitPromise": true, "returnByValue": true,
	})
	if err != nil || !strings.Contains(string(got), "loaded") {
		t.Fatalf("a frame of the person's tab after B left: %s %v", got, err)
	}
}

// TestRedTeamVirtualTimeStopsNoPersonsTab: A pauses virtual time on the
// person's tab, which B uses too, then dies. Chrome has no command that
// gives a page its clock back: only the detach, which B's session holds
// off. The page's timers never fired again (B's evaluate of a 10 ms
// timer waited out its bound), so the relay refuses virtual time on a tab
// the client did not open, and allows it on its own.
func TestRedTeamVirtualTimeStopsNoPersonsTab(t *testing.T) {
	a, b, sa, sb := sharedTab(t, "/form?left-virtual-time")
	a.call(sa, "Emulation.setVirtualTimePolicy", map[string]any{"policy": "pause"})
	a.ws.CloseNow()
	<-a.closed
	time.Sleep(500 * time.Millisecond)
	b.bound = 10 * time.Second
	got, err := b.call(sb, "Runtime.evaluate", map[string]any{
		"expression":   "new Promise(ok => setTimeout(() => ok('ran'), 10))",
		"awaitPromise": true, "returnByValue": true,
	})
	if err != nil || !strings.Contains(string(got), "ran") {
		t.Fatalf("a timer of the person's tab after A left: %s %v", got, err)
	}
	if _, err := b.call(sb, "Emulation.setVirtualTimePolicy", map[string]any{"policy": "pause"}); err == nil || !strings.Contains(err.Error(), "Target.createTarget") {
		t.Fatalf("virtual time on the person's tab: %v, want a refusal that says to open a tab", err)
	}
	c := dialRaw(t)
	_, sid := c.open(site.URL + "/form?own-virtual-time")
	c.must(sid, "Emulation.setVirtualTimePolicy", map[string]any{"policy": "advance"})
}
