package extcdp_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/internal/wire"
)

// zzPerson opens a tab as the person, has the page count clicks on its
// button (set up through the person's own port, so that the client has
// run no script there and the relay's guard is still off), and attaches a
// raw client to it.
func zzPerson(t *testing.T, name string) (*rawClient, string, string) {
	t.Helper()
	srv, tok := endpoint(t)
	id := userTab(t, site.URL+"/form?zz-"+name)
	closeUserTab(t, id)
	ctx, u := asPerson(t)
	for i := 0; ; i++ {
		_, err := u.Eval(ctx, id, countClicks)
		if err == nil {
			break
		}
		if i == 50 {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	a := dialRawTo(t, srv, tok)
	sa := a.attach(id)
	return a, sa, id
}

// zzLoopPage serves, on loopback, a page whose own script starts a loop
// that never yields just after it loads.
func zzLoopPage(t *testing.T) string {
	t.Helper()
	s := loopbackServer(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><button id=btn>b</button><script>setTimeout(() => { for (;;) {} }, 300)</script>`)
	}))
	return s.URL + "/loop"
}

// TestRedTeamUnguardedLoop attacks the guard's trigger: the relay turns
// the watchdog that ends a loop on the person's tab on only before
// Runtime.evaluate/callFunctionOn/runScript, addScriptToEvaluateOnNewDocument
// and DOM attribute/markup writes (runsCode in guard.go). Other commands
// run a client's code on the person's tab too, with no bound: a
// javascript: URL through Page.navigate, Page.setDocumentContent (and a
// data: URL, which the relay loads with it), a navigation to a page of the
// client's choosing. (Debugger.evaluateOnCallFrame of a loop on a page the
// client paused did the same; it is left: the watchdog resumes a paused
// page, which a running evaluation does not take.) Each leaves a loop that never yields
// on the person's tab and the client leaves; the person's tab must answer
// again (the guard's bound is 3 s here; the person waits 30 s). Measured
// (Chromium 156, 2026-11-29), before the relay turned the guard on for
// them: each case got no answer from the person's tab in 30 s, 3 runs of 3
// (javascriptURL/connected: the client stayed).
// Held: Page.reload's scriptToEvaluateOnLoad and
// Page.addScriptToEvaluateOnLoad (no loop ran), Debugger.setScriptSource
// ("no longer available").
func TestRedTeamUnguardedLoop(t *testing.T) {
	defer extcdp.SetSyncScriptBound(wedgeBound)()
	loop := "setTimeout(() => { for (;;) {} }, 300)"
	cases := map[string]func(t *testing.T, a *rawClient, sa, id string){
		"javascriptURL": func(t *testing.T, a *rawClient, sa, id string) {
			a.send(sa, "Page.navigate", map[string]any{"url": "javascript:" + loop + ";void 0"})
		},
		"setDocumentContent": func(t *testing.T, a *rawClient, sa, id string) {
			a.send(sa, "Page.setDocumentContent", map[string]any{"frameId": id, "html": "<button id=btn>b</button><script>" + loop + "</script>"})
		},
		"dataURL": func(t *testing.T, a *rawClient, sa, id string) {
			a.send(sa, "Page.navigate", map[string]any{"url": "data:text/html,<button id=btn>b</button><script>" + loop + "</script>"})
		},
		"loopPage": func(t *testing.T, a *rawClient, sa, id string) {
			a.send(sa, "Page.navigate", map[string]any{"url": zzLoopPage(t)})
		},
		"evaluateOnCallFrame": func(t *testing.T, a *rawClient, sa, id string) {
			ctx, u := asPerson(t)
			u.Eval(ctx, id, `window.ticks = 0, setInterval(() => ticks++, 50), 1`)
			a.must(sa, "Debugger.enable", nil)
			a.must(sa, "Debugger.pause", nil)
			var frame string
			for deadline := time.Now().Add(5 * time.Second); frame == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				a.mu.Lock()
				for _, ev := range a.events {
					if ev.Method == "Debugger.paused" && ev.SessionID == sa {
						var p struct {
							CallFrames []struct {
								CallFrameID string `json:"callFrameId"`
							} `json:"callFrames"`
						}
						jsonv2.Unmarshal(ev.Params, &p, wire.Options)
						if len(p.CallFrames) > 0 {
							frame = p.CallFrames[0].CallFrameID
						}
					}
				}
				a.mu.Unlock()
			}
			if frame == "" {
				t.Fatal("the page did not pause")
			}
			go a.send(sa, "Debugger.evaluateOnCallFrame", map[string]any{"callFrameId": frame, "expression": "for (;;) {}"})
		},
	}
	for _, sub := range []string{"javascriptURL/left", "javascriptURL/connected", "setDocumentContent/left", "dataURL/left", "loopPage/left"} {
		name, how, _ := strings.Cut(sub, "/")
		stay := how == "connected"
		t.Run(sub, func(t *testing.T) {
			a, sa, id := zzPerson(t, strings.ToLower(name))
			cases[name](t, a, sa, id)
			time.Sleep(time.Second) // the loop runs
			if !stay {
				a.ws.CloseNow()
				<-a.closed
			}
			personSeesItBack(t, id)
		})
	}
}
