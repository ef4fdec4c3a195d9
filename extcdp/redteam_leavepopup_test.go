package extcdp_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamPopupAsTheAgentLeaves: a client held to 127.0.0.1 and off
// private addresses clicks a button of a hostile page, and ends right
// after (its program exits). The page opens a popup a moment later, while
// the relay closes the client's tabs. The relay closed the tabs the
// client created when it left (closeCreated), once; a popup the
// extension reported after that inherited the gone client (relay.inherit)
// and nobody closed it, and the client's policy ended once its own tabs
// were gone. The popup's page asks 127.0.0.2 every 100 ms: 36-38 times in
// 4 s (red team, 4 of 4). (Delays of 50, 150 and 300 ms held: the closing
// tab is frozen before it opens the popup.)
func TestRedTeamPopupAsTheAgentLeaves(t *testing.T) {
	for _, delay := range []int{0, 20} {
		t.Run(fmt.Sprint(delay), func(t *testing.T) {
			var ticks, alive atomic.Int64
			forbidden := loopbackServer(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.URL.Path, "/tick") {
					ticks.Add(1)
				}
				fmt.Fprint(w, "secret")
			}))
			hostile := loopbackServer(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				switch {
				case r.URL.Path == "/popup":
					fmt.Fprintf(w, `<!doctype html><title>popup</title><script>setInterval(() => { fetch(%q, {mode: 'no-cors'}).catch(() => {}); fetch('/alive', {mode: 'no-cors'}).catch(() => {}) }, 100)</script>`, forbidden.URL+"/tick")
				case r.URL.Path == "/alive":
					alive.Add(1)
				default:
					open := fmt.Sprintf("setTimeout(() => window.open('/popup'), %d)", delay)
					if delay < 0 { // at once, in the click
						open = "window.open('/popup')"
					}
					fmt.Fprintf(w, `<!doctype html><title>hostile</title><button id=go onclick="%s">go</button>`, open)
				}
			}))
			srv, tok := endpoint(t)
			a := dialRawTo(t, srv, tok)
			a.must("", livetabcdp.CommandSetPolicy, map[string]any{"sharedOnly": true, "domains": []string{"127.0.0.1"}, "blockPrivate": true, "privateAllowed": []string{"127.0.0.1"}})
			_, sid := a.open(hostile.URL + "/")
			a.eval(sid, `document.readyState === 'complete' || new Promise(r => onload = r)`)
			a.send(sid, "Runtime.evaluate", map[string]any{"expression": `document.getElementById('go').click(), true`, "userGesture": true})
			a.ws.CloseNow()
			time.Sleep(4 * time.Second)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			u, err := env.User(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer u.Close()
			open := 0
			ts, _ := u.Targets(ctx)
			for _, x := range ts {
				if strings.HasPrefix(x.URL, hostile.URL) {
					open++
					u.CloseTab(ctx, x.TargetID)
				}
			}
			t.Logf("delay %d ms: 4 s after the agent left, %d of its tabs open; the popup asked its own server %d times and 127.0.0.2 %d times", delay, open, alive.Load(), ticks.Load())
			if n := ticks.Load(); n > 0 {
				t.Errorf("a popup the agent's page opened as the agent left reached 127.0.0.2 %d times (%d tabs left open)", n, open)
			}
		})
	}
}
