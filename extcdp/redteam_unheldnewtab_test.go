package extcdp_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamUnheldClientsNewTabLoadsAtOnce: while one client is held off
// private addresses (Livetab.setPolicy {domains, blockPrivate}), another
// client with no policy opens tabs at a private address (127.0.0.2 here:
// its own dev server). The popup rules leave out the tabs that exist when
// they are made, and the new tab did not yet: its first load was blocked
// and its first read was Chrome's error page, until the rules were made
// again and the load retried (red team, 1-3 of 6 tabs). A policy binds its
// own client, not another's tabs.
func TestRedTeamUnheldClientsNewTabLoadsAtOnce(t *testing.T) {
	srv, tok := endpoint(t)
	dev := newOpaqueCounter(t, "127.0.0.2", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<title>dev</title>the program's own dev server")
	})
	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}, "blockPrivate": true, "privateAllowed": []string{"127.0.0.1"}})
	tA, sA := a.open(site.URL + "/form?held")
	a.eval(sA, `1`)
	defer a.call("", "Target.closeTarget", map[string]any{"targetId": tA})

	b := dialRawTo(t, srv, tok)
	for i := range 6 {
		path := fmt.Sprintf("/unheld-%d", i)
		tid, sid := b.open(dev.URL + path)
		// The first read, as a program reads a tab it just made: where it
		// is once the document is there.
		got := b.eval(sid, `new Promise(r => { const f = () => location.href !== 'about:blank' && document.readyState !== 'loading' ? r(location.href + ' | ' + document.title) : setTimeout(f, 10); f(); })`)
		if !strings.HasPrefix(got, dev.URL+path) || !strings.Contains(got, "dev") {
			t.Errorf("tab %d of the client with no policy first read %q, not its page %s (the server saw %d requests)", i, got, dev.URL+path, dev.count(path))
		}
		b.call("", "Target.closeTarget", map[string]any{"targetId": tid})
	}
}
