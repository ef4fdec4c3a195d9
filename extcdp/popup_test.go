package extcdp_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/internal/browsertest"
	"github.com/livetab/livetab/internal/wire"
)

// The popup, driven as the person drives it: who drives which tab now,
// what they did, and the controls that stop one client or one tab.

// The popup's tests run in a browser as the person has it: windowed, with
// Chrome's "started debugging this browser" bar showing. One such browser
// serves them all; useWindowed makes it the package's env for one test.
var (
	windowedOnce sync.Once
	windowed     *browsertest.Env
	windowedErr  error
)

func useWindowed(t *testing.T) {
	t.Helper()
	if env == nil {
		browsertest.RequireChromium(t)
	}
	browsertest.RequireXvfb(t)
	windowedOnce.Do(func() {
		windowed, windowedErr = browsertest.StartEnv(browsertest.Options{Windowed: true, DebuggerBar: true, DebugPort: true})
	})
	if windowedErr != nil {
		t.Fatalf("starting the windowed test browser: %v", windowedErr)
	}
	headless := env
	env = windowed
	t.Cleanup(func() { env = headless })
}

// closeWindowed stops the windowed browser, if a test started it.
func closeWindowed() {
	if windowed != nil {
		windowed.Close()
	}
}

// person connects as the person at the keyboard to the windowed browser,
// with 60 s for the test.
func person(t *testing.T) (*browsertest.User, context.Context) {
	t.Helper()
	useWindowed(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	u, err := env.User(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(u.Close)
	return u, ctx
}

// namedProgram is a chromedp program on its own relay client, shown in
// the popup as name, with a tab at path.
func namedProgram(t *testing.T, name, path string) context.Context {
	t.Helper()
	actx, acancel := env.Relay.NewAllocator(context.Background(), extcdp.Options{ClientName: name})
	t.Cleanup(acancel)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancel2 := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(cancel2)
	if err := chromedp.Do(ctx, chromedp.Navigate(site.URL+path)); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// namedRaw is an endpoint client that gives its name in the URL.
func namedRaw(t *testing.T, name string) *rawClient {
	t.Helper()
	srv, tok := endpoint(t)
	return dialRawURL(t, env.Relay.BrowserURL(strings.TrimPrefix(srv.URL, "http://"), tok)+"&client="+url.QueryEscape(name))
}

// tabOf is the tab id of a target, as the relay knows it.
func tabOf(t *testing.T, targetID string) int64 {
	t.Helper()
	for i := 0; i < 200; i++ {
		for _, ts := range env.Relay.Status().Tabs {
			if ts.TargetID == targetID {
				return ts.TabID
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the relay does not know target %s", targetID)
	return 0
}

// chromeAttached reports whether Chrome has a debugger on the target.
func chromeAttached(t *testing.T, u *browsertest.User, targetID string) bool {
	t.Helper()
	res, err := u.Call(context.Background(), "Target.getTargetInfo", map[string]any{"targetId": targetID})
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		TargetInfo struct {
			Attached bool `json:"attached"`
		} `json:"targetInfo"`
	}
	if err := unmarshal(res, &r); err != nil {
		t.Fatal(err)
	}
	return r.TargetInfo.Attached
}

// "Stop this client" ends that client, and only that one: its next
// command fails with the person's reason, its tabs close, and another
// client carries on.
func TestPopupStopThisClient(t *testing.T) {
	u, ctx := person(t)
	a := namedProgram(t, "program A", "/form?stop-a")
	b := namedRaw(t, "program B")
	target := field(b.must("", "Target.createTarget", map[string]any{"url": site.URL + "/form?stop-b"}), "targetId")
	sb := field(b.must("", "Target.attachToTarget", map[string]any{"targetId": target, "flatten": true}), "sessionId")
	b.must(sb, "Runtime.evaluate", map[string]any{"expression": "1"})
	// What a program did beyond its commands, in its words (livetab mcp's
	// tools), with its policy's decision.
	b.must(sb, "Livetab.noteAction", map[string]any{"action": "browser_click", "decision": "allowed"})
	b.must(sb, "Livetab.noteAction", map[string]any{"action": "browser_navigate", "decision": "denied"})
	if _, err := chromedp.Run(a, chromedp.Evaluate[int](`1 + 1`)); err != nil {
		t.Fatal(err)
	}

	popup, err := u.OpenPopup(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer u.CloseTab(ctx, popup)
	// Both clients, by name, with their tabs by title and site, and what
	// they did.
	if err := u.WaitPopup(ctx, popup, `(() => {
		const now = document.getElementById('now').textContent, recent = document.getElementById('recent').textContent;
		return now.includes('program A') && now.includes('program B') && now.includes('127.0.0.1') &&
			recent.includes('program B: Runtime') && recent.includes('program A: Page.navigate') &&
			recent.includes('program B: browser_navigate on “form page” — denied');
	})()`); err != nil {
		t.Fatal(err)
	}
	savePopup(t, u, popup, "popup-now.png")
	// Only the popup hears what a client did: not another client, even one
	// that listens to the Livetab domain, nor the endpoint's status.
	b.must("", "Livetab.enable", map[string]any{})
	b.must("", "Target.setDiscoverTargets", map[string]any{"discover": true})
	if _, err := chromedp.Run(a, chromedp.Evaluate[int](`3`)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // past a report of the relay's
	if b.seen("program A") || b.seen("Runtime") {
		t.Error("a client heard of another client's actions")
	}
	if st, _ := jsonv2.Marshal(env.Relay.Status()); strings.Contains(string(st), "program") {
		t.Errorf("the relay's status names clients: %s", st)
	}

	if err := u.StopClient(ctx, popup, "program A"); err != nil {
		t.Fatal(err)
	}
	// The click reaches the relay a moment later, through the extension.
	var last error
	waitFor(t, "the stop error", func() bool {
		_, last = chromedp.Run(a, chromedp.Evaluate[int](`1 + 1`))
		return last != nil
	})
	if !strings.Contains(last.Error(), wire.StoppedMessage) {
		t.Fatalf("a stopped client's next command: %v, want the stop error", last)
	}
	// A new tab is refused too.
	if err := chromedp.Do(a, chromedp.Navigate(site.URL+"/form?again")); err == nil {
		t.Error("a stopped client navigated")
	}
	// The other client is untouched.
	if _, err := b.call(sb, "Runtime.evaluate", map[string]any{"expression": "2"}); err != nil {
		t.Errorf("the other client after the stop: %v", err)
	}
	// A's tab closed: it was A's own.
	waitFor(t, "A's tab to close", func() bool {
		for _, ts := range env.Relay.Status().Tabs {
			if strings.Contains(ts.URL, "stop-a") {
				return false
			}
		}
		return true
	})
	if err := u.WaitPopup(ctx, popup, `(() => {
		const now = document.getElementById('now').textContent;
		return !now.includes('program A') && now.includes('program B') &&
			document.getElementById('recent').textContent.includes('program A: stopped by you');
	})()`); err != nil {
		t.Fatal(err)
	}
	savePopup(t, u, popup, "popup-client-stopped.png")
	// The stopped program winds down without waiting on anything.
	start := time.Now()
	if err := chromedp.Cancel(a); err != nil {
		t.Errorf("cancelling the stopped program: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancelling the stopped program took %v", d)
	}
}

// An endpoint client the person stopped reads why, then is disconnected.
func TestPopupStopThisClientEndpoint(t *testing.T) {
	u, ctx := person(t)
	c := namedRaw(t, "stopped endpoint client")
	target := field(c.must("", "Target.createTarget", map[string]any{"url": site.URL + "/form?stop-ep"}), "targetId")
	sid := field(c.must("", "Target.attachToTarget", map[string]any{"targetId": target, "flatten": true}), "sessionId")
	popup, err := u.OpenPopup(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer u.CloseTab(ctx, popup)
	if err := u.StopClient(ctx, popup, "stopped endpoint client"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the stop to reach the relay", func() bool {
		_, err := c.call(sid, "Runtime.evaluate", map[string]any{"expression": "1"})
		return err != nil && strings.Contains(err.Error(), wire.StoppedMessage)
	})
	select {
	case <-c.closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the stopped endpoint client is still connected after 10 s")
	}
}

// "Stop" next to a tab lets go of it: Chrome's debugger leaves, the
// client's next command there says why, it may not attach again, and its
// other tabs work on.
func TestPopupStopDrivingThisTab(t *testing.T) {
	u, ctx := person(t)
	mine := userTab(t, site.URL+"/form?stop-tab")
	tabID := tabOf(t, mine)
	c := namedRaw(t, "tab driver")
	sid := field(c.must("", "Target.attachToTarget", map[string]any{"targetId": mine, "flatten": true}), "sessionId")
	c.must(sid, "Runtime.evaluate", map[string]any{"expression": "1"})
	other := field(c.must("", "Target.createTarget", map[string]any{"url": site.URL + "/form?other"}), "targetId")
	so := field(c.must("", "Target.attachToTarget", map[string]any{"targetId": other, "flatten": true}), "sessionId")
	c.must(so, "Runtime.evaluate", map[string]any{"expression": "1"})

	popup, err := u.OpenPopup(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer u.CloseTab(ctx, popup)
	if err := u.StopTab(ctx, popup, tabID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the stop to reach the relay", func() bool {
		_, err := c.call(sid, "Runtime.evaluate", map[string]any{"expression": "1"})
		return err != nil && strings.Contains(err.Error(), "the person stopped livetab driving tab")
	})
	// Chrome's own list of targets says attached a moment after the
	// extension's detach returned.
	waitFor(t, "Chrome's debugger to leave the stopped tab", func() bool { return !chromeAttached(t, u, mine) })
	if _, err := c.call("", "Target.attachToTarget", map[string]any{"targetId": mine, "flatten": true}); err == nil || !strings.Contains(err.Error(), "stopped") {
		t.Errorf("attaching again to the stopped tab: %v, want a refusal", err)
	}
	if _, err := c.call(so, "Runtime.evaluate", map[string]any{"expression": "2"}); err != nil {
		t.Errorf("the client's other tab after the stop: %v", err)
	}
	if err := u.WaitPopup(ctx, popup, fmt.Sprintf(`!document.querySelector('#now .tab[data-tab-id="%d"]') && document.getElementById('recent').textContent.includes('tab driver: stopped by you')`, tabID)); err != nil {
		t.Fatal(err)
	}
	savePopup(t, u, popup, "popup-tab-stopped.png")
}

// "Share this tab" in one click makes the tab usable by an agent limited
// to shared tabs; unsharing or closing it lets go of it at once.
func TestPopupShareCurrentTab(t *testing.T) {
	u, ctx := person(t)
	mine := userTab(t, site.URL+"/form?share-current")
	tabID := tabOf(t, mine)
	if _, err := u.Call(ctx, "Target.activateTarget", map[string]any{"targetId": mine}); err != nil {
		t.Fatal(err)
	}
	agent := namedRaw(t, "shared-only agent")
	agent.must("", "Livetab.setPolicy", map[string]any{"sharedOnly": true})
	if _, err := agent.call("", "Target.attachToTarget", map[string]any{"targetId": mine, "flatten": true}); err == nil {
		t.Fatal("a shared-only agent attached to a tab the person did not share")
	}

	popup, err := u.OpenPopup(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer u.CloseTab(ctx, popup)
	if err := u.WaitPopup(ctx, popup, fmt.Sprintf(`document.getElementById('sharecurrent').dataset.tabId === '%d'`, tabID)); err != nil {
		t.Fatal(err)
	}
	savePopup(t, u, popup, "popup-share.png")
	if err := u.ClickPopup(ctx, popup, "#sharecurrent"); err != nil {
		t.Fatal(err)
	}
	if err := u.WaitPopup(ctx, popup, `document.getElementById('sharecurrent').disabled`); err != nil {
		t.Fatal(err)
	}
	var sid string
	waitFor(t, "the share to reach the relay", func() bool {
		res, err := agent.call("", "Target.attachToTarget", map[string]any{"targetId": mine, "flatten": true})
		sid = field(res, "sessionId")
		return err == nil
	})
	if v := agent.must(sid, "Runtime.evaluate", map[string]any{"expression": "location.search", "returnByValue": true}); !strings.Contains(string(v), "share-current") {
		t.Fatalf("the shared tab answered %s", v)
	}
	if err := u.WaitPopup(ctx, popup, fmt.Sprintf(`!!document.querySelector('#tabs input[data-tab-id="%d"]')?.closest('label').querySelector('.driven') && !!document.querySelector('#now .tab[data-tab-id="%d"]')`, tabID, tabID)); err != nil {
		t.Fatal(err)
	}
	savePopup(t, u, popup, "popup-shared-driven.png")

	// Unsharing lets go of it at once.
	if err := u.ClickPopup(ctx, popup, fmt.Sprintf(`#tabs input[data-tab-id="%d"]`, tabID)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the unshared tab to be let go of", func() bool { return !chromeAttached(t, u, mine) })
	if _, err := agent.call(sid, "Runtime.evaluate", map[string]any{"expression": "1"}); err == nil {
		t.Error("the agent still drives the tab the person unshared")
	}

	// Shared again, then closed by the person: released at once.
	if err := u.ClickPopup(ctx, popup, "#sharecurrent"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the share to reach the relay", func() bool {
		res, err := agent.call("", "Target.attachToTarget", map[string]any{"targetId": mine, "flatten": true})
		sid = field(res, "sessionId")
		return err == nil
	})
	agent.must(sid, "Runtime.evaluate", map[string]any{"expression": "1"})
	if err := u.CloseTab(ctx, mine); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the closed tab to leave the relay", func() bool {
		for _, ts := range env.Relay.Status().Tabs {
			if ts.TabID == tabID {
				return false
			}
		}
		return true
	})
	if _, err := agent.call(sid, "Runtime.evaluate", map[string]any{"expression": "1"}); err == nil {
		t.Error("the agent's session on the closed tab still answers")
	}
}

// The pause holds across a browser restart: the extension keeps it, says
// it in the popup and on the toolbar button, and the relay refuses programs
// until the person resumes.
func TestPauseSurvivesBrowserRestart(t *testing.T) {
	u, ctx := person(t)
	if err := u.Pause(ctx, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if u, err := env.User(context.Background()); err == nil {
			u.Pause(context.Background(), false)
			u.Close()
		}
	})
	if err := env.RestartBrowser(); err != nil {
		t.Fatal(err)
	}
	u, err := env.User(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(u.Close)
	popup, err := u.OpenPopup(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer u.CloseTab(ctx, popup)
	if err := u.WaitPopup(ctx, popup, `document.getElementById('pause').textContent === 'Resume'`); err != nil {
		t.Fatalf("after a browser restart: %v", err)
	}
	if v, err := u.Eval(ctx, popup, `chrome.action.getBadgeText({})`); err != nil || string(v) != `"OFF"` {
		t.Errorf("the toolbar button after a browser restart says %s (%v), want OFF", v, err)
	}
	waitFor(t, "the new browser's hello", func() bool { return env.Relay.Status().Paused && env.Bridge.Connected() })
	prog, cancel := chromedp.NewContext(env.Allocator(t))
	defer cancel()
	if err := chromedp.Do(prog); err == nil || !strings.Contains(err.Error(), "paused by the person") {
		t.Errorf("a program after the restart, still paused: %v", err)
	}
	savePopup(t, u, popup, "popup-paused-after-restart.png")
	if err := u.ClickPause(ctx, popup, false); err != nil {
		t.Fatal(err)
	}
	prog2, cancel2 := chromedp.NewContext(env.Allocator(t))
	defer cancel2()
	if sum, err := chromedp.Run(prog2, chromedp.Evaluate[int](`40 + 2`)); err != nil || sum != 42 {
		t.Fatalf("after resume: %d, %v", sum, err)
	}
}

// A client chooses its name; the popup gets one line of printable text,
// bounded.
func TestClientNameCleaned(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"livetab mcp", "livetab mcp"},
		{"  two\nlines\x00and\u202enul  ", "two lines and nul"},
		{"", "default"},
		{"\x1b\x07", "default"},
		{strings.Repeat("é", 100), strings.Repeat("é", 59) + "…"},
	} {
		if got := extcdp.CleanName(c.in, "default"); got != c.want {
			t.Errorf("cleanName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// The extension keeps as many actions as the relay sends.
func TestMaxActionsIsOne(t *testing.T) {
	js, err := os.ReadFile("../extension/lib/activity.js")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), fmt.Sprintf("export const MAX_ACTIONS = %d;", wire.MaxActions)) {
		t.Errorf("extension/lib/activity.js's MAX_ACTIONS is not wire.MaxActions (%d)", wire.MaxActions)
	}
}
