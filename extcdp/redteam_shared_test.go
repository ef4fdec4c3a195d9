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
// B uses too, into a state that breaks it — offline, every URL blocked,
// paused in the debugger — then dies (its scripts off is refused there
// now: TestRedTeamFrozenPersonsTab). The person's tab
// must not stay broken while B stays attached.
func TestRedTeamLeftStateBreaksNoTab(t *testing.T) {
	for _, tc := range []struct {
		name string
		cmds [][2]any
	}{
		{"offline", [][2]any{{"Network.enable", nil}, {"Network.emulateNetworkConditions", map[string]any{"offline": true, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}}}},
		{"blocked", [][2]any{{"Network.enable", nil}, {"Network.setBlockedURLs", map[string]any{"urls": []string{"*"}}}}},
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
	got, err := addCrossFrame(a, sa)
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

// TestRedTeamLeftEmulationStaysOnNoTab: client A changes what the person's
// shared tab reports or how it lays out — data saver, platform, device
// posture, a hinge, safe-area insets, the small viewport, a virtual sensor, offline
// by navigator.onLine or by a network rule, the CPU count, the visible
// size, font sizes and families — then dies while B stays. The page must
// read what it read before A came. For the settings Chrome has no command
// to take back (only the detach, which B's session holds off) the relay
// refuses them on a tab the client did not open.
func TestRedTeamLeftEmulationStaysOnNoTab(t *testing.T) {
	styled := func(prop, value string) string {
		return `(() => { const d = document.createElement("div"); d.style.` + prop + ` = "` + value + `"; document.body.append(d); const v = getComputedStyle(d).` + prop + `; d.remove(); return v })()`
	}
	sensor := func(kind string) string {
		return `new Promise(ok => { try { const s = new ` + kind + `(); s.onerror = e => ok("error " + e.error.name); s.onactivate = () => ok("active"); s.start(); setTimeout(() => ok("nothing"), 1000) } catch (e) { ok("throw " + e.name) } })`
	}
	for _, tc := range []struct {
		name    string
		probe   string
		cmds    [][2]any
		refused bool // Chrome cannot take it back: refused on the person's tab
		reload  bool // what is taken back holds from the next document
	}{
		{"dataSaver", "String(navigator.connection.saveData)", [][2]any{{"Emulation.setDataSaverOverride", map[string]any{"dataSaverEnabled": true}}}, false, false},
		{"platform", "navigator.platform", [][2]any{{"Emulation.setNavigatorOverrides", map[string]any{"platform": "Evil"}}}, false, false},
		{"posture", "String(navigator.devicePosture && navigator.devicePosture.type)", [][2]any{{"Emulation.setDevicePostureOverride", map[string]any{"posture": map[string]any{"type": "folded"}}}}, false, false},
		{"safeArea", styled("paddingTop", "env(safe-area-inset-top)"), [][2]any{{"Emulation.setSafeAreaInsetsOverride", map[string]any{"insets": map[string]any{"top": 50}}}}, false, false},
		{"smallViewport", styled("height", "calc(100lvh - 100svh)"), [][2]any{{"Emulation.setSmallViewportHeightDifferenceOverride", map[string]any{"difference": 100}}}, false, false},
		// Two sensors: each is taken back by its own type.
		{"sensors", sensor("Accelerometer") + `.then(a => ` + sensor("Gyroscope") + `.then(g => a + " " + g))`, [][2]any{
			{"Emulation.setSensorOverrideEnabled", map[string]any{"enabled": true, "type": "accelerometer"}},
			{"Emulation.setSensorOverrideEnabled", map[string]any{"enabled": true, "type": "gyroscope"}},
		}, false, false},
		{"onLine", "String(navigator.onLine)", [][2]any{{"Network.enable", nil}, {"Network.overrideNetworkState", map[string]any{"offline": true, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}}}, false, false},
		{"offlineByRule", `fetch("/form?by-rule-" + Math.random()).then(r => String(r.status), e => e.name)`, [][2]any{{"Network.enable", nil}, {"Network.emulateNetworkConditionsByRule", map[string]any{"offline": true, "matchedNetworkConditions": []any{map[string]any{"urlPattern": "", "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}}}}}, false, false},
		{"displayFeatures", "String(window.viewport && window.viewport.segments && window.viewport.segments.length)", [][2]any{{"Emulation.setDisplayFeaturesOverride", map[string]any{"features": []any{map[string]any{"orientation": "vertical", "offset": 600, "maskLength": 20}}}}}, false, false},
		// A function of A's on every document of the person's tab, which
		// a page can find (and call, for no one). Measured: the next
		// document has it no more once A left, with no undoing sent.
		{"binding", "typeof window.livetabLeft + typeof window.livetabLeft2", [][2]any{{"Runtime.addBinding", map[string]any{"name": "livetabLeft"}}, {"Runtime.addBinding", map[string]any{"name": "livetabLeft2"}}}, false, true},
		{"hardwareConcurrency", "String(navigator.hardwareConcurrency)", [][2]any{{"Emulation.setHardwareConcurrencyOverride", map[string]any{"hardwareConcurrency": 64}}}, true, false},
		{"visibleSize", "String(innerWidth)", [][2]any{{"Emulation.setVisibleSize", map[string]any{"width": 200, "height": 200}}}, true, false},
		{"fontSizes", "getComputedStyle(document.documentElement).fontSize", [][2]any{{"Page.setFontSizes", map[string]any{"fontSizes": map[string]any{"standard": 40}}}}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b, sa, sb := sharedTab(t, "/form?left-emulation-"+tc.name)
			b.bound = 10 * time.Second
			before := b.eval(sb, tc.probe)
			var err error
			for _, c := range tc.cmds {
				if _, err = a.call(sa, c[0].(string), c[1]); err != nil {
					break
				}
			}
			switch {
			case tc.refused && (err == nil || !strings.Contains(err.Error(), "Target.createTarget")):
				t.Errorf("%s on the person's tab: %v, want a refusal that says to open a tab", tc.cmds[len(tc.cmds)-1][0], err)
			case !tc.refused && err != nil:
				t.Fatal(err)
			case !tc.refused:
				if set := b.eval(sb, tc.probe); set == before {
					t.Fatalf("A's commands changed nothing the page reads (%q): the case shows nothing", set)
				}
			}
			a.ws.CloseNow()
			<-a.closed
			time.Sleep(500 * time.Millisecond)
			if tc.reload {
				b.must(sb, "Page.reload", nil)
				b.eval(sb, "document.readyState")
			}
			if after := b.eval(sb, tc.probe); after != before {
				t.Errorf("the person's page reads %q after A left, %q before A came", after, before)
			}
		})
	}
	// On a tab of its own a client still sets them.
	c := dialRaw(t)
	_, sid := c.open(site.URL + "/form?own-emulation")
	c.eval(sid, "1")
	c.must(sid, "Emulation.setHardwareConcurrencyOverride", map[string]any{"hardwareConcurrency": 64})
	c.must(sid, "Page.setFontSizes", map[string]any{"fontSizes": map[string]any{"standard": 40}})
	if got := c.eval(sid, "String(navigator.hardwareConcurrency)"); got != "64" {
		t.Errorf("hardware concurrency on the client's own tab: %q, want 64", got)
	}
}

// TestRedTeamLeftTracingBlocksNoOne: A starts tracing through the person's
// shared tab and dies while B stays. Chrome traces once for the whole
// browser, so no client (B included) could trace again while B stays.
func TestRedTeamLeftTracingBlocksNoOne(t *testing.T) {
	a, b, sa, sb := sharedTab(t, "/form?left-tracing")
	a.must(sa, "Tracing.start", map[string]any{})
	a.ws.CloseNow()
	<-a.closed
	var err error
	for range 40 {
		time.Sleep(250 * time.Millisecond)
		if _, err = b.call(sb, "Tracing.start", map[string]any{}); err == nil {
			b.call(sb, "Tracing.end", nil)
			return
		}
	}
	t.Fatalf("B cannot trace 10 s after A left: %v", err)
}

// TestRedTeamLeftRenderingShowsOnNoTab: A makes the person's shared tab
// render otherwise — all grey as for a vision deficiency, an FPS meter,
// layer borders, a "paused in debugger" banner, a hinge across it — and
// dies while B stays: the person would see their page so until B left.
func TestRedTeamLeftRenderingShowsOnNoTab(t *testing.T) {
	overlay := func(method string, params map[string]any) [][2]any {
		return [][2]any{{"DOM.enable", nil}, {"Overlay.enable", nil}, {method, params}}
	}
	for _, tc := range []struct {
		name string
		cmds [][2]any
	}{
		{"visionDeficiency", [][2]any{{"Emulation.setEmulatedVisionDeficiency", map[string]any{"type": "achromatopsia"}}}},
		{"fpsCounter", overlay("Overlay.setShowFPSCounter", map[string]any{"show": true})},
		{"debugBorders", overlay("Overlay.setShowDebugBorders", map[string]any{"show": true})},
		{"pausedMessage", overlay("Overlay.setPausedInDebuggerMessage", map[string]any{"message": "paused by A"})},
		{"hinge", overlay("Overlay.setShowHinge", map[string]any{"hingeConfig": map[string]any{"rect": map[string]any{"x": 10, "y": 10, "width": 100, "height": 100}}})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b, sa, sb := sharedTab(t, "/form?left-rendering-"+tc.name)
			b.eval(sb, `document.body.style.background = "rgb(255, 0, 0)", 1`)
			shot := func() string {
				t.Helper()
				time.Sleep(300 * time.Millisecond) // a frame with what was set
				return field(b.must(sb, "Page.captureScreenshot", map[string]any{"format": "png"}), "data")
			}
			before := shot()
			for _, c := range tc.cmds {
				a.must(sa, c[0].(string), c[1])
			}
			if shot() == before {
				t.Fatal("the page renders the same with A's setting: the case shows nothing")
			}
			a.ws.CloseNow()
			<-a.closed
			time.Sleep(500 * time.Millisecond)
			if shot() != before {
				t.Error("the person's page renders otherwise after A left than before A came")
			}
		})
	}
}

// addCrossFrame has the page of c's session sid add a frame of another
// site and answers "loaded" once it loaded.
func addCrossFrame(c *rawClient, sid string) ([]byte, error) {
	return c.call(sid, "Runtime.evaluate", map[string]any{
		"expression": `new Promise(ok => {
			const f = document.createElement('iframe');
			f.onload = () => ok('loaded');
			f.src = '` + site.CrossURL + `/form?frame';
			document.body.appendChild(f);
		})`,
		"awaitPromise": true, "returnByValue": true,
	})
}
