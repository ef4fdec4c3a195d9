package extcdp_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamOthersPolicyLeavesMyPopups: two agents on one site, each held
// off private addresses; B also names its dev server, 127.0.0.2, which A
// does not. B's page opens a popup there. The extension holds every popup
// of livetab's tabs from its first request, not knowing whose tab opened
// it, by every owner's rules together: A's blocked B's popup, which never
// loaded (red team, 4 of 4). A client's policy binds its own tabs and
// their popups, not another client's. A's own popup there stays blocked,
// and B's to an address B does not name.
func TestRedTeamOthersPolicyLeavesMyPopups(t *testing.T) {
	srv, tok := endpoint(t)
	dev := newOpaqueCounter(t, "127.0.0.2", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<title>dev</title>B's dev server")
	})
	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}, "blockPrivate": true, "privateAllowed": []string{"127.0.0.1"}})
	tA, sA := a.open(site.URL + "/form?agent-a")
	defer a.call("", "Target.closeTarget", map[string]any{"targetId": tA})
	b := dialRawTo(t, srv, tok)
	b.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1", "127.0.0.2"}, "blockPrivate": true, "privateAllowed": []string{"127.0.0.1", "127.0.0.2"}})
	tB, sB := b.open(site.URL + "/form?agent-b")
	defer b.call("", "Target.closeTarget", map[string]any{"targetId": tB})
	a.eval(sA, "document.readyState === 'complete' || new Promise(r => onload = r)")
	b.eval(sB, "document.readyState === 'complete' || new Promise(r => onload = r)")

	wait := func(path string) int {
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end) && dev.count(path) == 0; {
			time.Sleep(50 * time.Millisecond)
		}
		return dev.count(path)
	}
	for _, way := range []string{"open", "link"} {
		path := "/b-" + way
		open := fmt.Sprintf(`window.open(%q), 1`, dev.URL+path)
		if way == "link" {
			open = fmt.Sprintf(`(() => { const l = document.createElement('a'); l.href = %q; l.target = '_blank'; document.body.append(l); l.click(); return 1 })()`, dev.URL+path)
		}
		b.eval(sB, open)
		if n := wait(path); n == 0 {
			t.Errorf("B's popup (%s) to 127.0.0.2, which B's policy allows, never reached it: A's policy held it", way)
		}
	}
	// A's own popup to the same place stays held, and so does B's to a
	// private address neither names, its first load made again or not.
	router := newOpaqueCounter(t, "127.0.0.3", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "the person's router")
	})
	a.eval(sA, fmt.Sprintf(`window.open(%q), 1`, dev.URL+"/a-open"))
	b.eval(sB, fmt.Sprintf(`window.open(%q), 1`, router.URL+"/b-router"))
	time.Sleep(2 * time.Second)
	if n := dev.count("/a-open"); n != 0 {
		t.Errorf("A's popup reached 127.0.0.2, outside A's policy (%d requests)", n)
	}
	if n := router.count("/b-router"); n != 0 {
		t.Errorf("B's popup reached 127.0.0.3, outside B's policy (%d requests)", n)
	}
}
