package extcdp_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// TestRedTeamPopupWatchOutlivesTheDeny: a client's page opened a popup; the
// client denies downloads while the extension's service worker is stopped
// (the relay answers Browser.setDownloadBehavior itself), and turns its
// downloads back to default before the worker is back. The relay's watch of
// the popup waits for the extension (ensureAttached, or the retry after
// ErrExtensionGone/ErrNotConnected) and attaches once it is back, after
// the client stopped caring: nothing lets go of the popup then, and the
// person saw the debugging bar on it for as long as it lived (3 of 3,
// red team 2026-12-01).
func TestRedTeamPopupWatchOutlivesTheDeny(t *testing.T) {
	srv := loopbackServer(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/popup" {
			fmt.Fprint(w, `<!doctype html><title>popup</title>popup`)
			return
		}
		fmt.Fprint(w, `<!doctype html><title>page</title><a id="x" href="/popup" target="_blank">open</a>`)
	}))
	s, tok := endpoint(t)
	b := dialRawTo(t, s, tok)
	b.bound = 40 * time.Second
	tid, sid := b.open(srv.URL + "/page")
	t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": tid}) })
	b.eval(sid, "document.getElementById('x').click(), 1")
	pop := b.popupOf(tid)
	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	time.Sleep(time.Second)
	if chromeAttached(t, u, pop) {
		t.Fatal("the popup is attached before any deny: this run shows nothing")
	}
	u2 := stopWorker(t)
	time.Sleep(300 * time.Millisecond)
	b.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "deny"})
	time.Sleep(200 * time.Millisecond)
	b.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "default"})
	wakeWorker(t, u2)
	b.eval(sid, "1")
	time.Sleep(4 * time.Second)
	at := chromeAttached(t, u, pop)
	t.Logf("popup %s: attached %v", pop, at)
	if at {
		// Still so a while later?
		time.Sleep(5 * time.Second)
		if chromeAttached(t, u, pop) {
			t.Errorf("the popup stays attached (debugging bar) 9 s after the client turned its downloads back to default")
		}
	}
}
