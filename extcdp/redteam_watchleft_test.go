package extcdp_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A program attaches to a popup the relay watches for its downloads, sets
// what changes the page (a narrow viewport; auto-attach that holds each
// new frame until the debugger lets it run, as Playwright and Puppeteer
// ask) and detaches. The relay keeps its debugger there, so Chrome did not
// take the program's settings back, and the relay, seeing no session left,
// did not either: the person's popup stayed narrow, and a frame it then
// loaded waited for a debugger no one held, forever.
func TestRedTeamLeftStateOnAWatchedPopup(t *testing.T) {
	var port string
	srv := loopbackServer(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/inner":
			fmt.Fprint(w, `<!doctype html><title>inner</title><p>inner`)
		case "/popup":
			fmt.Fprint(w, `<!doctype html><title>popup</title><p>popup`)
		default:
			fmt.Fprint(w, `<!doctype html><title>page</title><a id="x" href="/popup" target="_blank">open</a>`)
		}
	}))
	port = srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	s, tok := endpoint(t)
	b := dialRawTo(t, s, tok)
	b.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "deny"})
	tid, sid := b.open(srv.URL + "/page")
	t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": tid}) })
	b.eval(sid, "document.getElementById('x').click(), 1")
	pid, ok := waitPopupAttached(b, tid, true, 10*time.Second)
	if pid != "" {
		t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": pid}) })
	}
	if !ok {
		t.Fatal("the relay never watched the popup: this run shows nothing")
	}
	psid := field(b.must("", "Target.attachToTarget", map[string]any{"targetId": pid, "flatten": true}), "sessionId")
	b.must(psid, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 300, "height": 300, "deviceScaleFactor": 1, "mobile": false})
	b.must(psid, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true})
	if got := b.eval(psid, "innerWidth"); got != "300" {
		t.Fatalf("the override did not hold (innerWidth %s): this run shows nothing", got)
	}
	b.must("", "Target.detachFromTarget", map[string]any{"sessionId": psid})
	time.Sleep(500 * time.Millisecond)

	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if v, err := u.Eval(ctx, pid, "innerWidth"); err != nil || string(v) == "300" {
		t.Errorf("the person's popup is still 300 px wide after the program left it (%s, %v)", v, err)
	}
	load := fmt.Sprintf(`new Promise((ok) => { const f = document.createElement('iframe'); f.src = 'http://localhost:%s/inner';
f.onload = () => ok(f.contentWindow.length >= 0); document.body.append(f); setTimeout(() => ok('stuck'), 5000); })`, port)
	if v, err := u.Eval(ctx, pid, load); err != nil || string(v) != "true" {
		t.Errorf("a frame of another site the person's popup loads after the program left: %s, %v (want it loaded)", v, err)
	}
}
