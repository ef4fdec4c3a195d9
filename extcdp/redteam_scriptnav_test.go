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
