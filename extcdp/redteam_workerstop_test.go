package extcdp_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/internal/browsertest"
	"github.com/livetab/livetab/internal/testsite"
	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamWorkerStopsMidCommands: the extension's service worker stops
// (as Chrome stops an idle one) while a client has commands of every kind
// at it: a promise that never settles, a navigation to a server that does
// not answer, a screenshot, a new tab, a mouse event. Each that reached
// the extension is answered with an error at once, one still on its way
// (behind another of its session) within the bridge's reconnect wait
// (10 s), and so is a command sent while the worker is away; a new tab
// waited two of them, the stop's error taken for a window that closed;
// once the worker is back the
// client's next commands work, and no tab is left open that no client
// owns (but for one Chrome opened in the instant before the extension
// could note it: logged).
func TestRedTeamWorkerStopsMidCommands(t *testing.T) {
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(release)

	a := dialRaw(t)
	a.bound = 30 * time.Second
	tA := field(a.must("", "Target.createTarget", map[string]any{"url": site.URL + "/form?worker-stop"}), "targetId")
	sA := a.attach(tA)
	a.eval(sA, "1")
	sN := a.attach(field(a.must("", "Target.createTarget", map[string]any{"url": site.URL + "/form?worker-stop-nav"}), "targetId"))
	a.eval(sN, "1")

	type inflight struct {
		name string
		err  chan error
		took chan time.Duration
	}
	var all []inflight
	start := func(name, session, method string, params any) {
		f := inflight{name, make(chan error, 1), make(chan time.Duration, 1)}
		all = append(all, f)
		go func() {
			m, err := a.send(session, method, params)
			if err == nil && m.Error == nil {
				f.err <- nil
			} else if err != nil {
				f.err <- err
			} else {
				f.err <- errorOf(m)
			}
		}()
	}
	start("evaluate of a promise that never settles", sA, "Runtime.evaluate", map[string]any{"expression": "new Promise(() => {})", "awaitPromise": true})
	start("navigate to a server that does not answer", sN, "Page.navigate", map[string]any{"url": slow.URL + "/never"})
	time.Sleep(300 * time.Millisecond)
	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	start("screenshot", sA, "Page.captureScreenshot", map[string]any{"format": "png"})
	start("new tab", "", "Target.createTarget", map[string]any{"url": site.URL + "/form?worker-stop-orphan"})
	start("mouse event", sA, "Input.dispatchMouseEvent", map[string]any{"type": "mouseMoved", "x": 10, "y": 10})
	stopped := time.Now()
	if err := u.StopWorker(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, f := range all {
		select {
		case err := <-f.err:
			t.Logf("%s: answered %v after the stop: %v", f.name, time.Since(stopped).Round(time.Millisecond), err)
		case <-time.After(12 * time.Second):
			t.Errorf("%s: no answer 12 s after the worker stopped", f.name)
		}
	}
	// While the worker is away: an error within the reconnect wait.
	s := time.Now()
	_, err = a.call(sA, "Runtime.evaluate", map[string]any{"expression": "1"})
	t.Logf("a command sent while the worker is away: %v after %v", err, time.Since(s).Round(time.Millisecond))
	if time.Since(s) > 12*time.Second {
		t.Errorf("a command sent while the worker is away took %v", time.Since(s))
	}

	// Wake the worker as Chrome would, with an event it listens to.
	wakeWorker(t, u)
	if got := a.eval(sA, "40 + 2"); got != "42" {
		t.Errorf("after the worker came back: %s", got)
	}
	if _, err := a.call("", "Target.createTarget", map[string]any{"url": site.URL + "/form?worker-stop-after"}); err != nil {
		t.Errorf("a new tab after the worker came back: %v", err)
	}
	// A leaves: every tab it asked for closes, the one whose opening
	// the stop cut short included.
	a.ws.CloseNow()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ts, err := u.Targets(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var left []string
		for _, ti := range ts {
			if ti.Type == "page" && strings.Contains(ti.URL, "worker-stop") {
				left = append(left, ti.URL)
			}
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			for _, ti := range ts {
				if ti.Type == "page" && strings.Contains(ti.URL, "worker-stop") {
					u.CloseTab(context.Background(), ti.TargetID)
				}
			}
			// A tab Chrome opened before the stop let the extension note
			// it as livetab's is, to the extension and the relay, one the
			// person opened: left open (TestRedTeamLostCreateLeavesNoTab
			// holds the relay to closing those the extension noted).
			t.Logf("known limit: 10 s after its client left, a tab it asked for as the worker stopped is open: %v", left)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func errorOf(m rawMsg) error {
	return &cdpError{m.Error.Code, m.Error.Message}
}

type cdpError struct {
	code int64
	msg  string
}

func (e *cdpError) Error() string { return e.msg }

// wakeWorker wakes the extension's stopped worker as Chrome would, with an
// event it listens to (a tab opened and closed), and waits until it is
// connected again.
func wakeWorker(t *testing.T, u *browsertest.User) {
	t.Helper()
	wake, err := u.OpenTab(context.Background(), "about:blank")
	if err != nil {
		t.Fatal(err)
	}
	u.CloseTab(context.Background(), wake)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := env.Bridge.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
}

// stopWorker stops the extension's service worker, as Chrome stops an idle
// one, and returns the person's connection that stopped it (closed with
// the test).
func stopWorker(t *testing.T) *browsertest.User {
	t.Helper()
	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(u.Close)
	if err := u.StopWorker(context.Background()); err != nil {
		t.Fatal(err)
	}
	return u
}

// TestRedTeamWorkerStopKeepsTheHold: the extension's service worker stops
// and starts again (as Chrome stops an idle one) while a client held off
// private addresses drives a hostile tab that asks one every 20 ms. The
// hold must last through the stop, the start and the reconnection.
func TestRedTeamWorkerStopKeepsTheHold(t *testing.T) {
	forbidden := testsite.NewCounter(t, "127.0.0.2", "")
	hostile := testsite.NewCounter(t, "127.0.0.1", fmt.Sprintf(`<!doctype html><title>hostile</title><script>setInterval(() => fetch('%s/tick', {mode: 'no-cors'}).catch(() => {}), 20)</script>`, forbidden.URL))
	a := dialRaw(t)
	a.bound = 30 * time.Second
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}, "blockPrivate": true, "privateAllowed": []string{"127.0.0.1"}})
	tid := field(a.must("", "Target.createTarget", map[string]any{"url": hostile.URL + "/"}), "targetId")
	a.attach(tid)
	time.Sleep(time.Second)
	if n := forbidden.Hits.Load(); n != 0 {
		t.Fatalf("the hostile tab reached %s %d times before the stop", forbidden.URL, n)
	}
	u := stopWorker(t)
	time.Sleep(time.Second)
	wakeWorker(t, u)
	time.Sleep(2 * time.Second)
	if n := forbidden.Hits.Load(); n != 0 {
		t.Errorf("the hostile tab reached %s %d times while the worker stopped and came back", forbidden.URL, n)
	}
	if hostile.Hits.Load() == 0 {
		t.Error("the hostile page never loaded")
	}
}

// TestRedTeamRelayGoneKeepsItsTabsHeld: the program that runs the relay
// dies (killed: its clients never close), leaving a tab it opened for an
// agent held off private addresses on a hostile page that asks one every
// 20 ms. The extension keeps the policy while the relay may come back, and
// after that still holds the tabs livetab opened for it, as long as they
// are open.
func TestRedTeamRelayGoneKeepsItsTabsHeld(t *testing.T) {
	browsertest.RequireChromium(t)
	genv, err := browsertest.StartEnv(browsertest.Options{DebugPort: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(genv.Close)
	srv := httptest.NewServer(genv.Relay.Handler(extcdp.HandlerOptions{Token: "gone-token"}))
	t.Cleanup(srv.Close)
	url := genv.Relay.BrowserURL(strings.TrimPrefix(srv.URL, "http://"), "gone-token")
	forbidden := testsite.NewCounter(t, "127.0.0.2", "")
	hostile := testsite.NewCounter(t, "127.0.0.1", fmt.Sprintf(`<!doctype html><title>hostile</title><script>setInterval(() => { fetch('%s/tick', {mode: 'no-cors'}).catch(() => {}); fetch('/own').catch(() => {}) }, 20)</script>`, forbidden.URL))
	c := dialCDP(t, url)
	c.bound = 15 * time.Second
	if m, err := c.send("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}, "blockPrivate": true, "privateAllowed": []string{"127.0.0.1"}}); err != nil || m.Error != nil {
		t.Fatalf("setPolicy: %v %v", err, m)
	}
	c.newTab(t, hostile.URL+"/")
	time.Sleep(time.Second)
	if n := forbidden.Hits.Load(); n != 0 {
		t.Fatalf("the hostile tab reached %s %d times before the relay went", forbidden.URL, n)
	}
	genv.Bridge.Close() // the extension's socket closes; no client says goodbye
	own := hostile.Hits.Load()
	time.Sleep(18 * time.Second)
	if n := forbidden.Hits.Load(); n != 0 {
		t.Errorf("the hostile tab reached %s %d times in the 18 s after the relay went", forbidden.URL, n)
	}
	if n := hostile.Hits.Load() - own; n < 100 {
		t.Errorf("the hostile page asked its own server %d times in 18 s: it did not run", n)
	}
}
