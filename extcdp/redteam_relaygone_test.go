package extcdp_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/bridge"
	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/internal/browsertest"
	"github.com/livetab/livetab/internal/wire"
)

// personsTabNow reads, through the person's own debugging port, what the
// person's tab shows: whether a debugger is attached, its width, and
// whether its scripts run (a timer counts in window.ticks).
func personsTabNow(t *testing.T, genv *browsertest.Env, id string) (attached bool, width, ticking string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	u, err := genv.User(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	res, err := u.Call(ctx, "Target.getTargets", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		TargetInfos []struct {
			TargetID string `json:"targetId"`
			Attached bool   `json:"attached"`
		} `json:"targetInfos"`
	}
	jsonv2.Unmarshal(res, &r, wire.Options)
	for _, ti := range r.TargetInfos {
		if ti.TargetID == id {
			attached = ti.Attached
		}
	}
	ectx, ecancel := context.WithTimeout(ctx, 15*time.Second)
	defer ecancel()
	v, err := u.Eval(ectx, id, `(async () => {
		const a = window.ticks, t0 = performance.now();
		const st = await fetch('/form?gone-after-' + Math.random()).then(r => r.status, e => String(e));
		const ms = Math.round(performance.now() - t0);
		await new Promise(ok => setTimeout(ok, 300));
		return [innerWidth, window.ticks > a, st, ms];
	})()`)
	if err != nil {
		return attached, "?", "no answer in 15 s: " + err.Error()
	}
	var got []any
	jsonv2.Unmarshal(v, &got, wire.Options)
	if len(got) == 4 {
		width = goneJSON(got[0])
		ticking = goneJSON(got[1])
		if st, ms := goneJSON(got[2]), got[3].(float64); st != "200" || ms > 3000 {
			ticking += fmt.Sprintf("; a fetch of the page got %s after %v ms", st, ms)
		}
	}
	return attached, width, ticking
}

func goneJSON(v any) string {
	b, _ := jsonv2.Marshal(v, wire.Options)
	return string(b)
}

// TestRedTeamRelayGoneFreesThePersonsTab: a client of `livetab serve` (or
// of a program's in-process relay) attaches to a tab the person opened,
// emulates a 321 px phone on it, intercepts its requests and pauses it in
// the debugger; then the relay's process dies (killed: its bridge's socket
// closes, no client says goodbye, no Relay.Close) and does not come back
// at once. The client that set all that is gone: 20 s later (past the
// extension's 15 s) the person's tab must not stay paused, emulated,
// intercepted or attached; it stayed so until a relay came back. Then a
// relay comes back on the same address: the tab stays as it is.
func TestRedTeamRelayGoneFreesThePersonsTab(t *testing.T) {
	relayGone(t, [][2]any{
		{"Emulation.setDeviceMetricsOverride", map[string]any{"width": 321, "height": 456, "deviceScaleFactor": 1, "mobile": true}},
		{"Fetch.enable", map[string]any{"patterns": []map[string]any{{"urlPattern": "*"}}}},
		{"Debugger.enable", nil},
		{"Debugger.pause", nil},
	}, "Debugger.paused")
}

func relayGone(t *testing.T, cmds [][2]any, wait string) {
	browsertest.RequireChromium(t)
	genv, err := browsertest.StartEnv(browsertest.Options{DebugPort: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(genv.Close)
	srv := httptest.NewServer(genv.Relay.Handler(extcdp.HandlerOptions{Token: "gone-token"}))
	t.Cleanup(srv.Close)
	url := genv.Relay.BrowserURL(strings.TrimPrefix(srv.URL, "http://"), "gone-token")

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	u, err := genv.User(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id, err := u.OpenTab(ctx, site.URL+"/form?gone-relay-gone")
	u.Close()
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	c := dialRawURL(t, url)
	c.bound = 15 * time.Second
	s := c.attach(id)
	c.eval(s, `window.ticks = 0, setInterval(() => window.ticks++, 10), 1`)
	width := c.eval(s, "innerWidth")
	for _, cmd := range cmds {
		c.must(s, cmd[0].(string), cmd[1])
	}
	if wait != "" {
		deadline := time.Now().Add(5 * time.Second)
		for !c.hasEvent(wait, "") && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if !c.hasEvent(wait, "") {
			t.Fatalf("no %s", wait)
		}
	}

	addr := genv.Bridge.Addr().String()
	tok := genv.Bridge.Token()
	// No Relay.Close: a killed process closes nothing.
	genv.Bridge.Close() // the relay's process dies; the extension's socket closes
	time.Sleep(20 * time.Second)
	attached, w, ticking := personsTabNow(t, genv, id)
	t.Logf("20 s after the relay went: attached=%v width=%s ticking=%s", attached, w, ticking)
	var left []string
	if attached {
		left = append(left, "the debugger still attached")
	}
	if w != width {
		left = append(left, "width "+w+", was "+width)
	}
	if ticking != "true" {
		left = append(left, "the page's timers ran / its fetch: "+ticking)
	}
	if len(left) > 0 {
		t.Errorf("20 s after the relay's process went (its client gone with it), the person's tab: %s", strings.Join(left, "; "))
	}

	// The relay comes back on the same address: the tab must recover.
	bctx, bcancel := context.WithCancel(context.Background())
	t.Cleanup(bcancel)
	b2, err := bridge.Listen(bctx, bridge.Options{Addr: addr, Token: tok})
	if err != nil {
		t.Fatalf("a new bridge on %s: %v", addr, err)
	}
	t.Cleanup(func() { b2.Close() })
	r2, err := extcdp.NewRelay(b2, extcdp.RelayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r2.Close() })
	wctx, wcancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer wcancel()
	if err := b2.WaitConnected(wctx); err != nil {
		t.Fatalf("the extension did not come back to the new bridge: %v", err)
	}
	time.Sleep(3 * time.Second)
	attached, w, ticking = personsTabNow(t, genv, id)
	t.Logf("after the relay came back: attached=%v width=%s ticking=%s", attached, w, ticking)
	if attached || w != width || ticking != "true" {
		t.Errorf("after a relay came back the person's tab: attached=%v width=%s (was %s) ticking=%s", attached, w, width, ticking)
	}
}
