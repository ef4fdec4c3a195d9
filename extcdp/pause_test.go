package extcdp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/internal/browsertest"
	"github.com/livetab/livetab/internal/wire"
	"github.com/livetab/livetab/livetabcdp"
)

// The person's kill switch: Pause in the popup lets go of every tab and
// makes every program's next command fail with a clear error, through a
// worker restart, until Resume.
func TestPauseStopsEveryProgram(t *testing.T) {
	useWindowed(t) // as the person has it: a window, and Chrome's debugging bar
	tab := newTab(t)
	if err := chromedp.Do(tab, chromedp.Navigate(site.URL+"/form?pause")); err != nil {
		t.Fatal(err)
	}
	watcher := dialRaw(t)
	watcher.must("", livetabcdp.CommandEnable, map[string]any{})

	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// Through the popup, as the person does; its two states are saved as
	// pictures in the test's artifact directory (go test -artifacts).
	popup, err := u.OpenPopup(ctx)
	if err != nil {
		t.Fatal(err)
	}
	savePopup(t, u, popup, "popup-running.png")
	if err := u.ClickPause(ctx, popup, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { u.Pause(context.Background(), false) })
	savePopup(t, u, popup, "popup-paused.png")
	u.CloseTab(ctx, popup)

	// The running program's next command fails at once, and says why.
	start := time.Now()
	_, err = chromedp.Run(tab, chromedp.Evaluate[int](`1 + 1`))
	if err == nil || !strings.Contains(err.Error(), "paused by the person") {
		t.Fatalf("a command while paused: %v, want the pause error", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the pause error took %v", d)
	}
	// No tab stays attached, as the relay and as Chrome see it.
	for _, ts := range env.Relay.Status().Tabs {
		if ts.Attached {
			t.Errorf("tab %d still attached while paused", ts.TabID)
		}
	}
	if n := debuggedTabs(t, u); n != 0 {
		t.Errorf("Chrome has %d tabs under the debugger while paused", n)
	}
	// Clients that asked hear of it; getInfo and the status say it.
	waitEvent(t, watcher, livetabcdp.EventPausedChanged, `"paused":true`)
	if v := watcher.must("", livetabcdp.CommandGetInfo, map[string]any{}); !strings.Contains(string(v), `"paused":true`) {
		t.Errorf("getInfo while paused: %s", v)
	}
	if !env.Relay.Status().Paused {
		t.Error("the status does not say paused")
	}
	// A new tab is refused too, and nothing opens.
	before := len(env.Relay.Status().Tabs)
	tab2, cancel2 := chromedp.NewContext(env.Allocator(t))
	defer cancel2()
	if err := chromedp.Do(tab2); err == nil || !strings.Contains(err.Error(), "paused by the person") {
		t.Errorf("a new tab while paused: %v, want the pause error", err)
	}
	if after := len(env.Relay.Status().Tabs); after > before {
		t.Errorf("a tab opened while paused: %d tabs, %d before", after, before)
	}

	// The pause holds across a worker restart.
	if err := u.StopWorker(ctx); err != nil {
		t.Fatal(err)
	}
	wake, err := u.OpenPopup(ctx) // waking the worker, as the person would
	if err != nil {
		t.Fatal(err)
	}
	u.CloseTab(ctx, wake)
	if err := env.Bridge.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the hello reaches the relay
	if !env.Relay.Status().Paused {
		t.Fatal("the pause did not survive a worker restart")
	}
	tab3, cancel3 := chromedp.NewContext(env.Allocator(t))
	defer cancel3()
	if err := chromedp.Do(tab3); err == nil || !strings.Contains(err.Error(), "paused by the person") {
		t.Errorf("a new tab after the worker restarted, still paused: %v", err)
	}

	// Resume: programs work again.
	if err := u.Pause(ctx, false); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, watcher, livetabcdp.EventPausedChanged, `"paused":false`)
	tab4, cancel4 := chromedp.NewContext(env.Allocator(t))
	defer cancel4()
	if sum, err := chromedp.Run(tab4, chromedp.Evaluate[int](`40 + 2`)); err != nil || sum != 42 {
		t.Fatalf("after resume: %d, %v", sum, err)
	}
	// The tab the program drove before the pause was let go of: its next
	// command fails at once rather than run in a page whose state is gone.
	if _, err := chromedp.Run(tab, chromedp.Evaluate[int](`1 + 1`)); err == nil {
		t.Error("the session of before the pause still answers after resume")
	}
}

// The extension refuses with the relay's own words: one message for both.
func TestPausedMessageIsOne(t *testing.T) {
	js, err := os.ReadFile("../extension/lib/frame.js")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), "'"+wire.PausedMessage+"'") {
		t.Errorf("extension/lib/frame.js's PAUSED_MESSAGE is not wire.PausedMessage (%q)", wire.PausedMessage)
	}
}

// savePopup saves a picture of the popup in the test's artifact directory.
func savePopup(t *testing.T, u *browsertest.User, popup, name string) {
	t.Helper()
	png, err := u.ScreenshotPopup(context.Background(), popup)
	if err != nil {
		t.Fatal(err)
	}
	if len(png) < 1000 {
		t.Fatalf("the popup's picture has %d bytes", len(png))
	}
	if err := os.WriteFile(filepath.Join(t.ArtifactDir(), name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// debuggedTabs counts the pages Chrome reports attached to a debugger;
// the person's own connection attaches to none of them.
func debuggedTabs(t *testing.T, u *browsertest.User) int {
	t.Helper()
	res, err := u.Call(context.Background(), "Target.getTargets", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		TargetInfos []struct {
			Type     string `json:"type"`
			URL      string `json:"url"`
			Attached bool   `json:"attached"`
		} `json:"targetInfos"`
	}
	if err := unmarshal(res, &r); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ti := range r.TargetInfos {
		if ti.Type == "page" && ti.Attached {
			t.Logf("attached: %s", ti.URL)
			n++
		}
	}
	return n
}

// waitEvent waits up to 5 s for an event of c with method whose params
// contain s.
func waitEvent(t *testing.T, c *rawClient, method, s string) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case e := <-c.evs:
			if e.Method == method && strings.Contains(string(e.Params), s) {
				return
			}
		case <-deadline:
			t.Fatalf("no %s with %s within 5 s", method, s)
		}
	}
}
