package extcdp_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/livetab/livetab/internal/wire"
)

// Client A drives the person's tab (a user-agent override), the page
// wedges it (about:srcdoc#x), A leaves: its detach is refused and retried
// (stuckDetach). Client B tries to attach to the tab 30 or 300 ms later
// and is refused (the wedge); -1: no B, the control. The page lets go of
// the frame, B leaves too. B's failed attach (ext.attach cleared
// stuckDetach and took the tab into ours) ends the retry: the extension
// stays attached to the person's tab with A's override, for good.
// Held for good 2 of 2 (red team, stop 42); an attach now tries the held
// detach first, and is refused while it is still held.
func TestRedTeamFailedAttachCancelsStuckDetach(t *testing.T) {
	for _, delay := range []int{-1, 30, 300} {
		t.Run(fmt.Sprint(delay), func(t *testing.T) {
			srv := loopbackServer(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprint(w, `<!doctype html><title>wedge</title><iframe srcdoc="<p>inner</p>"></iframe>`)
			}))
			ep, tok := endpoint(t)
			tid := userTab(t, srv.URL+"/")
			closeUserTab(t, tid)
			ctx, u := asPerson(t)
			a := dialRawTo(t, ep, tok)
			sid := a.attach(tid)
			a.eval(sid, `document.readyState === 'complete' || new Promise(r => onload = r)`)
			a.must(sid, "Emulation.setUserAgentOverride", map[string]any{"userAgent": "rt-left-agent"})
			if _, err := u.Eval(ctx, tid, `document.querySelector('iframe').contentWindow.location.hash = 'x'`); err != nil {
				t.Fatal(err)
			}
			b := dialRawTo(t, ep, tok)
			a.ws.CloseNow()
			var res []byte
			var err error = fmt.Errorf("no B")
			if delay >= 0 {
				time.Sleep(time.Duration(delay) * time.Millisecond)
				res, err = b.call("", "Target.attachToTarget", map[string]any{"targetId": tid, "flatten": true})
			}
			t.Logf("B attach: %s err %v", res, err)
			var at struct {
				SessionID string `json:"sessionId"`
			}
			jsonv2.Unmarshal(res, &at, wire.Options)
			time.Sleep(1500 * time.Millisecond)
			if _, err := u.Eval(ctx, tid, `document.querySelector('iframe').remove()`); err != nil {
				t.Fatal(err)
			}
			att0 := true
			for end := time.Now().Add(10 * time.Second); time.Now().Before(end) && att0; time.Sleep(300 * time.Millisecond) {
				att0 = chromeAttached(t, u, tid)
			}
			ua, _ := u.Eval(ctx, tid, "navigator.userAgent")
			t.Logf("10 s after unwedge: chrome still attached %v; ua %s", att0, ua)
			if att0 && (at.SessionID == "" || err != nil) {
				t.Errorf("delay %d: no client holds the person's tab (B's attach failed), yet the extension's debugger stays on it 10 s after the wedge cleared", delay)
			}
			b.ws.CloseNow()
			time.Sleep(4 * time.Second)
			ua2, _ := u.Eval(ctx, tid, "navigator.userAgent")
			t.Logf("4 s after B left too: chrome attached %v; ua %s", chromeAttached(t, u, tid), ua2)
			r2, err2 := b.call(at.SessionID, "Runtime.evaluate", map[string]any{"expression": "6*7", "returnByValue": true})
			att := chromeAttached(t, u, tid)
			t.Logf("B evaluate after unwedge: %s err %v; chrome attached: %v", r2, err2, att)
			if at.SessionID != "" && (err2 != nil || !att) {
				t.Errorf("delay %d: B's session broke after the wedge cleared: err %v, attached %v", delay, err2, att)
			}
		})
	}
}
