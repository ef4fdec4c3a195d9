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
// set location. The extension holds such a load of a tab the client drives
// alone, and the relay ends its sessions once the tab is outside its
// domains: the client must never read the page there, however fast it
// asks.
func TestRedTeamScriptNavigationLeavesNoWindow(t *testing.T) {
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
	// The extension held the load (2026-11-24-a-driven-tab-stays-in-its-
	// clients-domains.md): the tab stayed off the page, and when it
	// reattached after the error page the session could go on.
	t.Log("held: the session went on, and never showed the page outside the domains")
}
