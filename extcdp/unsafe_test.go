package extcdp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/internal/browsertest"
	"github.com/livetab/livetab/internal/wire"
)

// The attacks here crashed the whole browser before the relay guarded
// them (docs/decisions/2026-11-23-chrome-debugger-inputs-emulated-or-refused.md),
// so they run on a browser of their own: a crash must not take the shared
// test browser, and every other test, with it.

// answerBound is how long a guarded command may take to be answered.
const answerBound = 5 * time.Second

// crashEnv is a test browser for inputs that may crash it, with an endpoint
// on its relay and a canary tab that must keep answering.
type crashEnv struct {
	// root is the test that started the env: what ensure starts lives
	// as long as it, not as the subtest that happened to restart it.
	root   *testing.T
	env    *browsertest.Env
	url    string
	canary *rawClient
	csid   string
}

func startCrashEnv(t *testing.T) *crashEnv {
	t.Helper()
	browsertest.RequireChromium(t)
	e := &crashEnv{root: t}
	t.Cleanup(func() {
		if e.env != nil {
			e.env.Close()
		}
	})
	e.ensure(t)
	return e
}

// ensure starts a new browser when the last attack took the previous one
// down, so that each attack shows its own result.
func (e *crashEnv) ensure(t *testing.T) {
	t.Helper()
	if e.env != nil {
		select {
		case <-e.env.Browser.Done():
		default:
			if e.env.Bridge.Connected() {
				return
			}
		}
		e.env.Close()
		t.Log("starting a new browser: the previous one went down")
	}
	var err error
	if e.env, err = browsertest.StartEnv(browsertest.Options{}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e.env.Relay.Handler(extcdp.HandlerOptions{Token: "crash-token"}))
	e.root.Cleanup(srv.Close)
	e.url = e.env.Relay.BrowserURL(strings.TrimPrefix(srv.URL, "http://"), "crash-token")
	e.canary = dialCDP(e.root, e.url)
	// Not newTab: its failure would end root from t's goroutine.
	ct, err := e.canary.call("", "Target.createTarget", map[string]any{"url": site.URL + "/form?canary"})
	if err != nil {
		t.Fatal(err)
	}
	at, err := e.canary.call("", "Target.attachToTarget", map[string]any{"targetId": field(ct, "targetId"), "flatten": true})
	if err != nil {
		t.Fatal(err)
	}
	e.csid = field(at, "sessionId")
}

// alive fails the test unless the person's browser is still up: the
// process runs, the extension is connected and another tab answers.
func (e *crashEnv) alive(t *testing.T) {
	t.Helper()
	select {
	case <-e.env.Browser.Done():
		t.Fatal("the browser exited")
	default:
	}
	if !e.env.Bridge.Connected() {
		t.Fatal("the extension disconnected")
	}
	if v, err := e.canary.evalJSON(e.csid, "6*7"); err != nil || v != "42" {
		t.Fatalf("another tab no longer answers Runtime.evaluate: %q %v", v, err)
	}
}

// newTab opens a tab as a client does and attaches a flat session to it.
func (c *rawClient) newTab(t *testing.T, url string) (targetID, sid string) {
	t.Helper()
	var ct struct{ TargetID string }
	json.Unmarshal(c.must("", "Target.createTarget", map[string]any{"url": url}), &ct)
	var at struct{ SessionID string }
	json.Unmarshal(c.must("", "Target.attachToTarget", map[string]any{"targetId": ct.TargetID, "flatten": true}), &at)
	return ct.TargetID, at.SessionID
}

// evalJSON returns the value of an expression, JSON-encoded.
func (c *rawClient) evalJSON(sid, expr string) (string, error) {
	r, err := c.send(sid, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true})
	if err != nil {
		return "", err
	}
	if r.Error != nil {
		return "", fmt.Errorf("%s", r.Error.Message)
	}
	var v struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
	}
	json.Unmarshal(r.Result, &v)
	return string(v.Result.Value), nil
}

// Same-document navigations of a new tab's about:blank crashed Chromium
// through chrome.debugger (not through its own debugging port). The relay
// makes the page navigate itself and answers as Chrome does for a
// same-document navigation: the frame id, no loaderId.
func TestAttackFragmentNavigate(t *testing.T) {
	if env == nil {
		browsertest.RequireChromium(t)
	}
	e := startCrashEnv(t)
	cases := []struct {
		name, start, url, frame, hash string
		enable                        bool
	}{
		{name: "about:blank#x", start: "about:blank", url: "about:blank#x", hash: `"#x"`},
		{name: "about:blank#x after Page.enable", start: "about:blank", url: "about:blank#x", hash: `"#x"`, enable: true},
		{name: "about:blank empty fragment", start: "about:blank", url: "about:blank#", hash: `""`},
		{name: "about:blank#a to #b", start: "about:blank#a", url: "about:blank#b", hash: `"#b"`},
		{name: "about:blank?q#x", start: "about:blank?q", url: "about:blank?q#x", hash: `"#x"`},
		{name: "main frame by id", start: "about:blank", url: "about:blank#x", frame: "main", hash: `"#x"`},
		{name: "odd spelling", start: "about:blank", url: " about:blank#x\n", hash: `"#x"`},
		{name: "http page fragment", start: site.URL + "/form", url: site.URL + "/form#frag", hash: `"#frag"`, enable: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e.ensure(t)
			c := dialCDP(t, e.url)
			id, sid := c.newTab(t, tc.start)
			defer c.call("", "Target.closeTarget", map[string]any{"targetId": id})
			if _, err := c.evalJSON(sid, "1+1"); err != nil {
				t.Fatal(err)
			}
			if tc.enable {
				c.must(sid, "Page.enable", nil)
			}
			params := map[string]any{"url": tc.url}
			if tc.frame == "main" {
				params["frameId"] = id
			}
			start := time.Now()
			r, err := c.send(sid, "Page.navigate", params)
			took := time.Since(start)
			if err != nil {
				e.alive(t)
				t.Fatal(err)
			}
			if r.Error != nil {
				e.alive(t)
				t.Fatalf("Page.navigate(%q): %s", tc.url, r.Error.Message)
			}
			e.alive(t)
			var res map[string]any
			json.Unmarshal(r.Result, &res)
			if res["frameId"] != id || res["loaderId"] != nil {
				t.Fatalf("reply %s, want the shape of a same-document navigation: frameId %s and no loaderId", r.Result, id)
			}
			if h, err := c.evalJSON(sid, "location.hash"); err != nil || h != tc.hash {
				t.Fatalf("location.hash %s %v, want %s", h, err, tc.hash)
			}
			t.Logf("answered in %v", took.Round(time.Microsecond))
		})
	}
}

// Through chromedp, the fragment navigation returns (chromedp waits for
// Page.navigatedWithinDocument) and leaves the browser up.
func TestAttackFragmentNavigateChromedp(t *testing.T) {
	if env == nil {
		browsertest.RequireChromium(t)
	}
	e := startCrashEnv(t)
	actx, cancelA := extcdp.NewAllocator(context.Background(), e.env.Bridge)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	// The first run opens the tab, bound to the context it gets.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"about:blank#x", site.URL + "/form", site.URL + "/form#frag", site.URL + "/form#other"} {
		nctx, cancelN := context.WithTimeout(ctx, answerBound)
		start := time.Now()
		err := chromedp.Do(nctx, chromedp.Navigate(u))
		cancelN()
		if err != nil {
			e.alive(t)
			t.Fatalf("Navigate(%q): %v", u, err)
		}
		e.alive(t)
		want := u[strings.Index(u+"#", "#"):]
		hash, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.hash`))
		if err != nil || hash != want {
			t.Fatalf("after Navigate(%q): location.hash %q %v, want %q", u, hash, err, want)
		}
		t.Logf("Navigate(%q) in %v", u, time.Since(start).Round(time.Microsecond))
	}
}

// Debug and internal pages are refused with an error that says why:
// about:version and chrome://inducebrowsercrashforrealz (typed in the
// address bar) crashed the browser, chrome:// pages detach the debugger.
func TestAttackInternalPagesRefused(t *testing.T) {
	if env == nil {
		browsertest.RequireChromium(t)
	}
	e := startCrashEnv(t)
	c := dialCDP(t, e.url)
	id, sid := c.newTab(t, site.URL+"/form")
	defer c.call("", "Target.closeTarget", map[string]any{"targetId": id})
	for _, p := range []map[string]any{
		{"url": "about:version"},
		{"url": "chrome://inducebrowsercrashforrealz", "transitionType": "address_bar"},
		{"url": "about:inducebrowsercrashforrealz", "transitionType": "address_bar"},
		{"url": " CHROME://crash"},
		{"url": "chrome://version"},
		{"url": "view-source:" + site.URL + "/form"},
	} {
		r, err := c.send(sid, "Page.navigate", p)
		if err != nil {
			e.alive(t)
			t.Fatal(err)
		}
		e.alive(t)
		if r.Error == nil || r.Error.Code != -32000 || !strings.Contains(r.Error.Message, "livetab refuses") {
			t.Fatalf("Page.navigate %v: %s %+v, want a -32000 refusal", p, r.Result, r.Error)
		}
		if v, err := c.evalJSON(sid, "location.pathname"); err != nil || v != `"/form"` {
			t.Fatalf("the tab after the refused %v: %s %v", p, v, err)
		}
	}
}

// A scheme Chrome does not know is answered as Chrome answers it
// (net::ERR_ABORTED: it would have handed the URL to another program), and
// never sent: the navigation's start alone detaches an extension's
// debugger, and no other program opens.
func TestExternalSchemeAbortedAsChrome(t *testing.T) {
	if env == nil {
		browsertest.RequireChromium(t)
	}
	c := dialRaw(t)
	res := c.must("", "Target.createTarget", map[string]any{"url": "about:blank"})
	id := field(res, "targetId")
	defer c.call("", "Target.closeTarget", map[string]any{"targetId": id})
	sid := field(c.must("", "Target.attachToTarget", map[string]any{"targetId": id, "flatten": true}), "sessionId")
	c.must(sid, "Page.navigate", map[string]any{"url": site.URL + "/form"})
	for _, u := range []string{"mailto:someone@example.com", "bad://127.0.0.1/index", " BAD+X://y"} {
		r, err := c.send(sid, "Page.navigate", map[string]any{"url": u})
		if err != nil {
			t.Fatal(err)
		}
		if r.Error != nil || field(r.Result, "errorText") != "net::ERR_ABORTED" || field(r.Result, "frameId") != id {
			t.Fatalf("Page.navigate %q: %s %+v, want Chrome's errorText net::ERR_ABORTED on frame %s", u, r.Result, r.Error, id)
		}
		v, err := c.call(sid, "Runtime.evaluate", map[string]any{"expression": "location.pathname", "returnByValue": true})
		if err != nil || !strings.Contains(string(v), `"/form"`) {
			t.Fatalf("the tab after %q: %s, %v", u, v, err)
		}
	}
}

// A sender that skips the relay and speaks to the extension directly gets
// the same inputs refused by the extension's backstop.
func TestAttackBackstopInExtension(t *testing.T) {
	if env == nil {
		browsertest.RequireChromium(t)
	}
	e := startCrashEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b := e.env.Bridge
	res, err := b.Call(ctx, wire.CreateTab, 0, wire.CreateTabParams{URL: "about:blank"})
	if err != nil {
		t.Fatal(err)
	}
	var tab wire.TabInfo
	if err := jsonv2.Unmarshal(res, &tab, wire.Options); err != nil {
		t.Fatal(err)
	}
	defer b.Call(context.Background(), wire.CloseTab, 0, wire.TabParams{TabID: tab.TabID})
	if _, err := b.Call(ctx, wire.Attach, 0, wire.TabParams{TabID: tab.TabID}); err != nil {
		t.Fatal(err)
	}
	defer b.Call(context.Background(), wire.Detach, 0, wire.TabParams{TabID: tab.TabID})
	// Right after the attach (the tab may not show its URL yet), and after
	// a Runtime.evaluate as in the first report.
	for _, expr := range []string{"", "1+1"} {
		if expr != "" {
			if _, err := b.Call(ctx, "Runtime.evaluate", tab.TabID, map[string]any{"expression": expr}); err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range []map[string]any{
			{"url": "about:blank#x"},
			{"url": "about:version"},
			{"url": "chrome://inducebrowsercrashforrealz", "transitionType": "address_bar"},
		} {
			_, err := b.Call(ctx, "Page.navigate", tab.TabID, p)
			e.alive(t)
			if err == nil || !strings.Contains(err.Error(), "livetab refuses") {
				t.Fatalf("Page.navigate %v straight to the extension: %v, want its refusal", p, err)
			}
		}
	}
	// No display features took the browser down too
	// (TestAttackDisplayFeaturesOverride).
	for _, p := range []map[string]any{{"features": []any{}}, {}} {
		_, err := b.Call(ctx, "Emulation.setDisplayFeaturesOverride", tab.TabID, p)
		time.Sleep(time.Second) // a crash takes a moment to show
		e.alive(t)
		if err == nil || !strings.Contains(err.Error(), "livetab refuses") {
			t.Fatalf("Emulation.setDisplayFeaturesOverride %v straight to the extension: %v, want its refusal", p, err)
		}
	}
	// What the extension lets through still works.
	if _, err := b.Call(ctx, "Page.navigate", tab.TabID, map[string]any{"url": "about:blank"}); err != nil {
		t.Fatal(err)
	}
	e.alive(t)
}

// dialCDP connects a raw client held to answerBound: the attacks assert
// that every command is answered that soon.
func dialCDP(t *testing.T, url string) *rawClient {
	t.Helper()
	c := dialRawURL(t, url)
	c.bound = answerBound
	return c
}

// TestAttackDisplayFeaturesOverride: Emulation.setDisplayFeaturesOverride
// with no features, sent through chrome.debugger to a tab of the client's
// own, took the whole browser down (it exited). The relay sends
// Emulation.clearDisplayFeaturesOverride instead, which gives a desktop
// page no features too; a hinge still goes to Chrome. Each is answered and
// the browser answers on.
func TestAttackDisplayFeaturesOverride(t *testing.T) {
	if env == nil {
		browsertest.RequireChromium(t)
	}
	e := startCrashEnv(t)
	for _, tc := range []struct {
		name     string
		features []any
	}{
		{"none", []any{}},
		{"null", nil},
		{"hinge", []any{map[string]any{"orientation": "vertical", "offset": 600, "maskLength": 20}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.ensure(t)
			c := dialCDP(t, e.url)
			id, sid := c.newTab(t, site.URL+"/form?display-features")
			defer c.call("", "Target.closeTarget", map[string]any{"targetId": id})
			if _, err := c.evalJSON(sid, "1+1"); err != nil {
				t.Fatal(err)
			}
			c.bound = 10 * time.Second
			r, err := c.send(sid, "Emulation.setDisplayFeaturesOverride", map[string]any{"features": tc.features})
			time.Sleep(time.Second) // a crash takes a moment to show
			e.alive(t)
			if err != nil {
				t.Fatal(err)
			}
			if r.Error != nil {
				t.Errorf("Emulation.setDisplayFeaturesOverride: %s", r.Error.Message)
			}
		})
	}
}

// TestCrashEnvServesLaterSubtests: after a subtest's attack took the
// browser down and ensure started another, the next subtests must still
// reach the new browser through the endpoint, and the canary must answer:
// both belong to the test, not to the subtest that happened to restart.
func TestCrashEnvServesLaterSubtests(t *testing.T) {
	if env == nil {
		browsertest.RequireChromium(t)
	}
	e := startCrashEnv(t)
	t.Run("down", func(t *testing.T) {
		e.env.Browser.Close() // as a crash would
		e.ensure(t)
		e.alive(t)
	})
	t.Run("after", func(t *testing.T) {
		e.ensure(t)
		e.alive(t)
		c := dialCDP(t, e.url)
		id, sid := c.newTab(t, site.URL+"/form?after-restart")
		defer c.call("", "Target.closeTarget", map[string]any{"targetId": id})
		if v, err := c.evalJSON(sid, "6*7"); err != nil || v != "42" {
			t.Fatalf("a new tab after the restart: %q %v", v, err)
		}
	})
}
