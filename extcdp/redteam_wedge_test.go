package extcdp_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/internal/browsertest"
	"github.com/livetab/livetab/internal/wire"
)

// wedgeBound is the sync-script bound these tests give the relay: short,
// so the tests are, and well under personWaits.
const wedgeBound = 3 * time.Second

// personWaits is how long the person gives their tab to answer again.
const personWaits = 30 * time.Second

// countClicks makes the page count the clicks on its button, as a page's
// own event handler.
const countClicks = `window.clicks = 0, document.getElementById("btn").addEventListener("click", () => clicks++), 1`

// personClicks clicks the button of the person's tab as the person would
// (a real mouse event, through Chrome's own debugging port, not livetab)
// and returns what the page's counter reads after; it fails the test when
// the tab does not answer within personWaits.
func personClicks(t *testing.T, targetID string) string {
	t.Helper()
	ctx, u := asPerson(t)
	res, err := u.Call(ctx, "Target.attachToTarget", map[string]any{"targetId": targetID, "flatten": true})
	if err != nil {
		t.Fatal(err)
	}
	sid := field(res, "sessionId")
	eval := func(expr string) string {
		t.Helper()
		start := time.Now()
		r, err := u.CallSession(ctx, sid, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true})
		if err != nil {
			t.Fatalf("the person's tab did not answer %q within %v (waited %v): %v", expr, personWaits, time.Since(start).Round(time.Millisecond), err)
		}
		var v struct {
			Result struct {
				Value any `json:"value"`
			} `json:"result"`
		}
		jsonv2.Unmarshal(r, &v, wire.Options)
		s, _ := v.Result.Value.(string)
		return s
	}
	var xy struct{ X, Y float64 }
	jsonv2.Unmarshal([]byte(eval(`(() => { const r = document.getElementById("btn").getBoundingClientRect(); return JSON.stringify({X: r.x + r.width/2, Y: r.y + r.height/2}) })()`)), &xy, wire.Options)
	for _, typ := range []string{"mousePressed", "mouseReleased"} {
		if _, err := u.CallSession(ctx, sid, "Input.dispatchMouseEvent", map[string]any{"type": typ, "x": xy.X, "y": xy.Y, "button": "left", "clickCount": 1}); err != nil {
			t.Fatalf("the person's click: %v", err)
		}
	}
	return eval(`String(window.clicks)`)
}

// asPerson connects to the browser's own debugging port as the person
// until the test ends; ctx bounds how long the person waits.
func asPerson(t *testing.T) (context.Context, *browsertest.User) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), personWaits)
	t.Cleanup(cancel)
	u, err := env.User(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(u.Close)
	return ctx, u
}

// TestRedTeamWedgedTabOutlivesNoClient: a client runs a script that never
// yields (while(true){}) on a tab the person opened. Chrome answers
// nothing of that tab while it runs — the person can neither click nor
// type there — and before livetab bounded it, the loop outlived the client
// for good: after the client left, the person's tab still did not answer
// in 30 s. Chrome refuses Runtime.terminateExecution to an extension's
// debugger ("not allowed for untrusted clients"), so the relay gives the
// script Chrome's own evaluate timeout, which ends only that script.
func TestRedTeamWedgedTabOutlivesNoClient(t *testing.T) {
	defer extcdp.SetSyncScriptBound(wedgeBound)()
	person := wedgePerson
	t.Run("left", func(t *testing.T) {
		a, sa, id := person(t, "left")
		go a.send(sa, "Runtime.evaluate", map[string]any{"expression": "while (true) {}"})
		time.Sleep(500 * time.Millisecond) // the loop runs
		a.ws.CloseNow()
		<-a.closed
		if got := personClicks(t, id); got != "1" {
			t.Fatalf("the page counted %q clicks of the person's, want 1", got)
		}
	})
	t.Run("connected", func(t *testing.T) {
		a, sa, id := person(t, "connected")
		a.bound = personWaits
		got, err := a.call(sa, "Runtime.evaluate", map[string]any{"expression": "while (true) {}"})
		if err != nil || !strings.Contains(string(got), `"exceptionDetails"`) || !strings.Contains(string(got), "Target.createTarget") {
			t.Fatalf("a script that never yields on the person's tab: %s %v, want an exception that says why it ended and what to do", got, err)
		}
		if got := personClicks(t, id); got != "1" {
			t.Fatalf("the page counted %q clicks of the person's, want 1", got)
		}
		// The client's own timeout, shorter than the bound, stays its own.
		if _, err := a.call(sa, "Runtime.evaluate", map[string]any{"expression": "while (true) {}", "timeout": 200}); err == nil || strings.Contains(err.Error(), "livetab") {
			t.Fatalf("a script past the client's own timeout: %v, want Chrome's own error", err)
		}
	})
	t.Run("awaiting", func(t *testing.T) {
		// Waiting on a promise is no busy tab (Playwright's waitForFunction
		// waits so): the bound is of the script's sync part only.
		a, sa, _ := person(t, "awaiting")
		a.bound = personWaits
		got, err := a.call(sa, "Runtime.evaluate", map[string]any{
			"expression":   "new Promise(ok => setTimeout(() => ok('waited'), " + ms(wedgeBound+time.Second) + "))",
			"awaitPromise": true, "returnByValue": true,
		})
		if err != nil || !strings.Contains(string(got), "waited") {
			t.Fatalf("a promise awaited past the bound: %s %v", got, err)
		}
	})
	t.Run("ownTab", func(t *testing.T) {
		// On a tab of its own a client's script runs as long as it likes.
		a := dialRaw(t)
		a.bound = personWaits
		_, sid := a.open(site.URL + "/form?wedge-own")
		a.eval(sid, "1")
		got, err := a.call(sid, "Runtime.evaluate", map[string]any{
			"expression":    "(() => { const end = Date.now() + " + ms(wedgeBound+time.Second) + "; while (Date.now() < end) {} return 'ran' })()",
			"returnByValue": true,
		})
		if err != nil || !strings.Contains(string(got), "ran") {
			t.Fatalf("a long script on the client's own tab: %s %v", got, err)
		}
	})
}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
