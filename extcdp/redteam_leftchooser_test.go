package extcdp_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// personProbe is the person at the keyboard on their own tab, through
// Chrome's own port: a raw client attached to the tab.
func personProbe(t *testing.T, targetID string) (*rawClient, string) {
	p := dialRawURL(t, env.Browser.DebugURL)
	p.bound = 5 * time.Second
	return p, p.attach(targetID)
}

// A client that drives the person's tab leaves (dies) while a file chooser
// it intercepted (Page.setInterceptFileChooserDialog) waits on the tab, or
// after it detached. Once it is gone, the person's tab must work as before:
// its script runs, and the person's own click on a file input opens a
// chooser (control-filechooser is the probe's control).
func TestRedTeamLeftFileChooser(t *testing.T) {
	srv := loopbackServer(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>person</title><input type=file id=f><button id=b>b</button>`)
	}))
	for _, tc := range []string{"control-filechooser", "filechooser", "filechooser-stays-then-leaves"} {
		t.Run(tc, func(t *testing.T) {
			person := userTab(t, srv.URL+"/page?"+tc)
			closeUserTab(t, person)
			time.Sleep(300 * time.Millisecond)
			if !strings.HasPrefix(tc, "control") {
				s, tok := endpoint(t)
				b := dialRawTo(t, s, tok)
				sid := b.attach(person)
				b.must(sid, "Page.enable", nil)
				b.eval(sid, "document.readyState === 'complete' || new Promise(r => onload = r)")
				b.must(sid, "Page.setInterceptFileChooserDialog", map[string]any{"enabled": true})
				b.eval(sid, "document.getElementById('f').click(), 1")
				for deadline := time.Now().Add(5 * time.Second); !b.hasEvent("Page.fileChooserOpened", "") && time.Now().Before(deadline); {
					time.Sleep(20 * time.Millisecond)
				}
				t.Logf("file chooser opened heard: %v", b.hasEvent("Page.fileChooserOpened", ""))
				if tc == "filechooser-stays-then-leaves" {
					b.must("", "Target.detachFromTarget", map[string]any{"sessionId": sid})
					time.Sleep(500 * time.Millisecond)
				}
				b.ws.CloseNow()
				time.Sleep(1500 * time.Millisecond)
			}
			p, psid := personProbe(t, person)
			r, err := p.call(psid, "Runtime.evaluate", map[string]any{"expression": "document.title", "returnByValue": true})
			t.Logf("the person's tab runs script: %s %v", r, err)
			if err != nil {
				t.Fatalf("%s: the person's tab no longer runs its script after the client left: %v", tc, err)
			}
			p.must(psid, "Page.enable", nil)
			p.must(psid, "Page.setInterceptFileChooserDialog", map[string]any{"enabled": true})
			p.eval(psid, "document.getElementById('f').click(), 1")
			for deadline := time.Now().Add(4 * time.Second); !p.hasEvent("Page.fileChooserOpened", "") && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
			}
			if !p.hasEvent("Page.fileChooserOpened", "") {
				t.Errorf("%s: the person's click on the file input opens no chooser after the client left", tc)
			}
			p.call(psid, "Page.setInterceptFileChooserDialog", map[string]any{"enabled": false})
		})
	}
}
