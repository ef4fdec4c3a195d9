package extcdp_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/internal/wire"
)

// tickPage serves, on loopback, a page of the person's whose own script
// (at a URL, so a breakpoint can name it) ticks every 100 ms, with a div
// holding text that is a loop, should it ever become a script.
func tickPage(t *testing.T) string {
	t.Helper()
	s := loopbackServer(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/tick.js":
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprint(w, "window.ticks = 0;\nfunction tick() {\n  ticks++;\n}\nsetInterval(tick, 100);\n")
		default:
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<!doctype html><button id=btn>b</button><div id=code>setTimeout(() => { for (;;) {} }, 300)</div><script src="/tick.js"></script>`)
		}
	}))
	return s.URL + "/page"
}

// tickingPerson opens the tick page as the person and attaches a raw client
// to it that has sent nothing yet.
func tickingPerson(t *testing.T) (*rawClient, string, string, string) {
	t.Helper()
	srv, tok := endpoint(t)
	url := tickPage(t)
	id := userTab(t, url)
	closeUserTab(t, id)
	ctx, u := asPerson(t)
	for i := 0; ; i++ {
		v, err := u.Eval(ctx, id, `String(window.ticks > 0)`)
		if err == nil && strings.Contains(string(v), "true") {
			break
		}
		if i == 50 {
			t.Fatalf("the person's page does not tick: %s %v", v, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	a := dialRawTo(t, srv, tok)
	sa := a.attach(id)
	return a, sa, id, url
}

// TestRedTeamLoopWays: commands that were outside runsCode (guard.go)
// and still ran a client's code on the person's tab, and a way the guard's
// pause cannot reach (a breakpoint's condition: now refused there). Each leaves a loop that never yields on the person's tab;
// the client leaves (or stays); the person's tab must answer again.
//   - conditionalBreakpoint: Debugger.enable, then a breakpoint on the
//     page's own tick() whose condition is a loop. No runsCode command
//     was sent, so the guard never came on.
//   - conditionalBreakpointGuarded: the same after a Runtime.evaluate (the
//     guard on): V8 evaluates a condition with breaks disabled, so the
//     guard's Debugger.pause may not interrupt it.
//   - fulfill: Fetch.enable, Page.reload, and the page answered with
//     Fetch.fulfillRequest whose body starts a loop.
//   - setNodeName: a div whose text is a loop renamed to a script
//     (DOM.setNodeName), which Blink inserts as a new script element.
//
// Measured (Chromium, 2026-11-30, before the fix): every case but control
// got no answer from the person's tab in 30 s, 2-3 runs of 2-3 each.
func TestRedTeamLoopWays(t *testing.T) {
	defer extcdp.SetSyncScriptBound(wedgeBound)()
	loopCond := "(() => { for (;;) {} })()"
	cases := map[string]func(t *testing.T, a *rawClient, sa, id, url string){
		// control: no loop; the harness sees the tab back.
		"control": func(t *testing.T, a *rawClient, sa, id, url string) {
			a.must(sa, "Debugger.enable", nil)
		},
		"conditionalBreakpoint": func(t *testing.T, a *rawClient, sa, id, url string) {
			a.must(sa, "Debugger.enable", nil)
			condition(t, a, sa, url, loopCond)
		},
		"conditionalBreakpointGuarded": func(t *testing.T, a *rawClient, sa, id, url string) {
			a.must(sa, "Runtime.evaluate", map[string]any{"expression": "1"})
			a.must(sa, "Debugger.enable", nil)
			condition(t, a, sa, url, loopCond)
		},
		"fulfill": func(t *testing.T, a *rawClient, sa, id, url string) {
			a.must(sa, "Fetch.enable", map[string]any{"patterns": []map[string]any{{"urlPattern": "*", "resourceType": "Document"}}})
			go a.send(sa, "Page.reload", nil)
			var reqID string
			for deadline := time.Now().Add(10 * time.Second); reqID == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				a.mu.Lock()
				for _, ev := range a.events {
					if ev.Method == "Fetch.requestPaused" && ev.SessionID == sa {
						var p struct {
							RequestID string `json:"requestId"`
						}
						jsonv2.Unmarshal(ev.Params, &p, wire.Options)
						reqID = p.RequestID
					}
				}
				a.mu.Unlock()
			}
			if reqID == "" {
				t.Fatal("no Fetch.requestPaused for the reload")
			}
			body := `<!doctype html><button id=btn>b</button><script>setTimeout(() => { for (;;) {} }, 300)</script>`
			a.must(sa, "Fetch.fulfillRequest", map[string]any{"requestId": reqID, "responseCode": 200,
				"responseHeaders": []map[string]any{{"name": "Content-Type", "value": "text/html"}},
				"body":            base64.StdEncoding.EncodeToString([]byte(body))})
		},
		"setNodeName": func(t *testing.T, a *rawClient, sa, id, url string) {
			var doc struct {
				Root struct {
					NodeID int64 `json:"nodeId"`
				} `json:"root"`
			}
			jsonv2.Unmarshal(a.must(sa, "DOM.getDocument", nil), &doc, wire.Options)
			var q struct {
				NodeID int64 `json:"nodeId"`
			}
			jsonv2.Unmarshal(a.must(sa, "DOM.querySelector", map[string]any{"nodeId": doc.Root.NodeID, "selector": "#code"}), &q, wire.Options)
			a.must(sa, "DOM.setNodeName", map[string]any{"nodeId": q.NodeID, "name": "script"})
		},
	}
	for _, sub := range []string{"control/left", "conditionalBreakpoint/left", "conditionalBreakpointGuarded/connected", "fulfill/left", "setNodeName/left"} {
		name, how, _ := strings.Cut(sub, "/")
		stay := how == "connected"
		t.Run(sub, func(t *testing.T) {
			a, sa, id, url := tickingPerson(t)
			cases[name](t, a, sa, id, url)
			time.Sleep(1500 * time.Millisecond) // the loop runs
			if !stay {
				a.ws.CloseNow()
				<-a.closed
			}
			personSeesItBack(t, id)
		})
	}
}

// condition sets a breakpoint on the tick page's tick() with condition
// cond: refused on the person's tab, which is what the test wants to see;
// should it go through, the tab's answer tells.
func condition(t *testing.T, a *rawClient, sa, url, cond string) {
	t.Helper()
	_, err := a.call(sa, "Debugger.setBreakpointByUrl", map[string]any{"url": strings.TrimSuffix(url, "/page") + "/tick.js", "lineNumber": 2, "condition": cond})
	if err == nil {
		t.Errorf("a breakpoint with a loop for a condition was set on the person's tab")
	} else if !strings.Contains(err.Error(), "refuses") {
		t.Errorf("the refusal does not say so: %v", err)
	}
}
