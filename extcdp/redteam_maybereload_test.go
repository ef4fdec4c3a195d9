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

// TestRedTeamMaybeRetryNavigatesThePersonsTab: as in
// TestRedTeamPersonsNewTabKeepsItsPrivateAddress the person's new tab's
// first load (127.0.0.2) is held while it is a maybe-popup. The person
// goes elsewhere in that tab at once (another address). When MAYBE_MS
// ends the extension's retryBlocked loads the old blocked URL again, and
// takes the person's tab away from where they went.
func TestRedTeamMaybeRetryNavigatesThePersonsTab(t *testing.T) {
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
	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"sharedOnly": true, "domains": []string{"127.0.0.1"}, "blockPrivate": true, "privateAllowed": []string{"127.0.0.1"}})
	tid, sid := a.open(site.URL + "/form?agent")
	a.eval(sid, `new Promise(r => { const f = () => document.readyState === 'complete' && location.href !== 'about:blank' ? r(location.href) : setTimeout(f, 20); f(); })`)
	if _, err := u.Call(ctx, "Target.activateTarget", map[string]any{"targetId": tid}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	mine, err := u.OpenTab(ctx, router.URL+"/first")
	if err != nil {
		t.Fatal(err)
	}
	defer u.CloseTab(ctx, mine)
	// The person goes elsewhere at once, in the same tab.
	at, err := u.Call(ctx, "Target.attachToTarget", map[string]any{"targetId": mine, "flatten": true})
	if err != nil {
		t.Fatal(err)
	}
	ps := field(at, "sessionId")
	elsewhere := site.URL + "/form?elsewhere"
	if _, err := u.CallSession(ctx, ps, "Page.navigate", map[string]any{"url": elsewhere}); err != nil {
		t.Fatal(err)
	}
	u.Call(ctx, "Target.detachFromTarget", map[string]any{"sessionId": ps})
	time.Sleep(300 * time.Millisecond)
	before, _ := u.Eval(ctx, mine, `location.href + ' | ' + document.title`)
	t.Logf("the person's tab 300 ms after they sent it on: %s", before)
	if !strings.Contains(string(before), "elsewhere") {
		t.Fatalf("the person's own navigation did not take: %s", before)
	}
	time.Sleep(3 * time.Second)
	v, err := u.Eval(ctx, mine, `location.href + ' | ' + document.title`)
	t.Logf("the person's tab after going to %s: %s %v; the router saw %d", elsewhere, v, err, router.count("/first"))
	if !strings.Contains(string(v), "elsewhere") {
		t.Errorf("the person's tab, sent to %s, is at %s: the extension loaded the old blocked URL again", elsewhere, v)
	}
	a.call("", "Target.closeTarget", map[string]any{"targetId": tid})
}
