package extcdp_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/internal/browsertest"
	"github.com/livetab/livetab/internal/testsite"
	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamKeptTabAddressBar: a client held to 127.0.0.1 opens a tab and
// gives it to the person (Livetab.keepTab), still attached or detached.
// The person's own navigation there (no initiator, as from the address
// bar) is theirs: the rules that hold a client's own tabs to its domains
// blocked it while the client stayed attached (ERR_BLOCKED_BY_CLIENT, 2 of
// 3, red team 2026-12-01).
func TestRedTeamKeptTabAddressBar(t *testing.T) {
	t.Parallel() // its own servers and tabs; it waits 11 s twice beside the others
	outside := testsite.NewCounter(t, "127.0.0.2", "<title>person</title>person")
	allowed := testsite.NewCounter(t, "127.0.0.1", "<title>allowed</title>ok")
	srv, tok := endpoint(t)
	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	for _, stage := range []string{"attached", "detached"} {
		a := dialRawTo(t, srv, tok)
		a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}})
		tid, sid := a.open(allowed.URL + "/kept-" + stage)
		a.eval(sid, "document.readyState === 'complete' || new Promise(r => onload = r)")
		a.must("", livetabcdp.CommandKeepTab, map[string]any{"targetId": tid})
		if stage == "detached" {
			a.must("", "Target.detachFromTarget", map[string]any{"sessionId": sid})
		}
		// Past NEW_TAB_MS (10 s), after which the extension no longer
		// loads a blocked first load of a new tab again (retryBlocked),
		// which would hide a block.
		time.Sleep(11 * time.Second)
		before := outside.Hits.Load()
		err := personNavigate(u, tid, outside.URL+"/typed-"+stage)
		time.Sleep(1500 * time.Millisecond)
		n := outside.Hits.Load() - before
		loc, _ := u.Eval(context.Background(), tid, "location.href")
		t.Logf("%s: the person's navigation: %v; the server had %d requests; the tab is at %s", stage, err, n, loc)
		if n == 0 || err != nil || !strings.Contains(string(loc), "/typed-") {
			t.Errorf("%s: the person's navigation in the tab the program kept for them was blocked", stage)
		}
		a.ws.CloseNow()
		time.Sleep(time.Second)
		u.CloseTab(context.Background(), tid)
	}
}

// personNavigate loads url in the tab as the person would from the address
// bar: a navigation no page started.
func personNavigate(u *browsertest.User, tid, url string) error {
	ctx := context.Background()
	res, err := u.Call(ctx, "Target.attachToTarget", map[string]any{"targetId": tid, "flatten": true})
	if err != nil {
		return err
	}
	sid := field(res, "sessionId")
	defer u.Call(ctx, "Target.detachFromTarget", map[string]any{"sessionId": sid})
	r, err := u.CallSession(ctx, sid, "Page.navigate", map[string]any{"url": url})
	if err != nil {
		return err
	}
	if e := field(r, "errorText"); e != "" {
		return fmt.Errorf("%s", e)
	}
	return nil
}
