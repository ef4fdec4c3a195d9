package extcdp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/internal/testsite"
	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamScriptNavigationLeavesNoWindow: a client held to 127.0.0.1
// may not Page.navigate elsewhere, but its own script (or the page's) may
// set location. The relay ends its sessions once the tab is outside its
// domains; the client must not read the page there in between, however
// fast it asks.
func TestRedTeamScriptNavigationLeavesNoWindow(t *testing.T) {
	// A known hole, found on 2026-11-24: the relay ends the sessions when
	// the extension's tab update names the new URL, and a Runtime.evaluate
	// can run in the new document before that (2 of 5 runs read the page).
	// Closing it needs the extension to block, for the tabs a client with
	// domains drives, every document request outside them (as it does for
	// popups), not the relay to end sessions after the fact.
	t.Skip("known hole: a script navigation leaves a window before the relay ends the session (see the comment)")
	srv, tok := endpoint(t)
	secret := testsite.NewCounter(t, "127.0.0.2", "<title>forbidden</title><p id=s>secret of 127.0.0.2</p>")
	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}})
	_, sid := a.open(site.URL + "/form")
	if _, err := a.evalJSON(sid, `setTimeout(() => location.href = '`+secret.URL+`/x', 0), 1`); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for n := 0; time.Now().Before(deadline); n++ {
		got, err := a.evalJSON(sid, `document.title + ' ' + (document.body ? document.body.innerText : '')`)
		if err != nil {
			t.Logf("held after %d reads: %v", n, err)
			return
		}
		if strings.Contains(got, "secret of 127.0.0.2") {
			t.Fatalf("the client read the page outside its domains: %s", got)
		}
	}
	t.Fatal("the session on the tab outside the client's domains never ended")
}
