package extcdp_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamPersonsNewTabKeepsItsPrivateAddress: a client held off private
// addresses (Livetab.setPolicy {domains, blockPrivate}) opens a tab and
// the person looks at it (it is the active tab of their window). The person
// then opens a new tab of their own at their router's or dev server's
// page (127.0.0.2 here), as they would with Ctrl+T and the address bar or
// a bookmark. Chrome names the active tab, the client's, as the opener of
// such a tab, so the extension holds it as a maybe-popup for MAYBE_MS; the
// rules of pages fetched ahead (privateAheadRules) block every main-frame
// load of a private address no page of the domains started in every tab
// they do not leave out, the new one too, and the person's own load has no
// initiator. Their tab shows Chrome's error page and is never loaded again
// (retryBlocked skips a maybe tab, and nothing retries it once the maybe
// ends). A client's policy binds its client, not the person's tabs.
func TestRedTeamPersonsNewTabKeepsItsPrivateAddress(t *testing.T) {
	srv, tok := endpoint(t)
	router := newOpaqueCounter(t, "127.0.0.2", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<title>router</title>the person's router")
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	u, err := env.User(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	for _, tc := range []struct {
		held, agentActive bool
	}{{false, true}, {true, true}, {true, false}} {
		held := tc.held
		a := dialRawTo(t, srv, tok)
		if held {
			a.must("", livetabcdp.CommandSetPolicy, map[string]any{"sharedOnly": true, "domains": []string{"127.0.0.1"}, "blockPrivate": true, "privateAllowed": []string{"127.0.0.1"}})
		}
		tid, sid := a.open(site.URL + "/form?agent")
		if got := a.eval(sid, `new Promise(r => { const f = () => document.readyState === 'complete' && location.href !== 'about:blank' ? r(location.href) : setTimeout(f, 20); f(); })`); !strings.HasPrefix(got, site.URL) {
			t.Fatalf("the client's own tab is at %s", got)
		}
		// The person looks at the client's tab, or at a tab of their own.
		look := tid
		if !tc.agentActive {
			own, err := u.OpenTab(ctx, site.URL+"/form?person")
			if err != nil {
				t.Fatal(err)
			}
			defer u.CloseTab(ctx, own)
			look = own
		}
		if _, err := u.Call(ctx, "Target.activateTarget", map[string]any{"targetId": look}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		path := fmt.Sprintf("/mine-%v-%v", held, tc.agentActive)
		mine, err := u.OpenTab(ctx, router.URL+path)
		if err != nil {
			t.Fatal(err)
		}
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end) && router.count(path) == 0; {
			time.Sleep(50 * time.Millisecond)
		}
		// Time for the rules to let go and anything to load it again.
		time.Sleep(2 * time.Second)
		n := router.count(path)
		title := ""
		if v, err := u.Eval(ctx, mine, `location.href + ' | ' + document.title`); err == nil {
			title = string(v)
		} else {
			title = err.Error()
		}
		t.Logf("held=%v agentActive=%v: the person's tab at %s: the router saw %d request(s); the tab shows %s", held, tc.agentActive, router.URL+path, n, title)
		if n == 0 || !strings.Contains(title, "router") {
			t.Errorf("held=%v agentActive=%v: the person's own new tab never loaded their router's page (%d requests; tab: %s)", held, tc.agentActive, n, title)
		}
		u.CloseTab(ctx, mine)
		a.call("", "Target.closeTarget", map[string]any{"targetId": tid})
		a.ws.CloseNow()
		time.Sleep(500 * time.Millisecond)
	}
}
