package extcdp_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/testsite"
	"github.com/livetab/livetab/internal/wire"
	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamFirstMomentOfANewTab: a client held off private addresses
// opens tabs straight onto a hostile page of an allowed host, whose first
// script and first image ask another loopback address. The tab loads as it
// is created, before the relay has told the extension that the tab is the
// client's: its first requests went out unheld (1 of about 120 in a loaded
// CI run of TestRedTeamHostileRequestsWhileTheTabsChange). The extension
// holds a tab created for such a client before it loads anything.
func TestRedTeamFirstMomentOfANewTab(t *testing.T) {
	srv, tok := endpoint(t)
	forbidden := testsite.NewCounter(t, "127.0.0.2", "secret")
	hostile := testsite.NewCounter(t, "127.0.0.1", fmt.Sprintf(`<!doctype html><title>hostile</title>`+
		`<img src="%[1]s/img"><script>fetch("%[1]s/fetch", {mode: "no-cors"}).catch(() => {}); new Image().src = "%[1]s/script-img"</script>`, forbidden.URL))
	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}, "blockPrivate": true, "privateAllowed": []string{"127.0.0.1"}})
	// Four at a time: each new tab makes the extension work out its rules
	// again, which is when a tab not yet listed as the client's fell out of
	// the rules that hold new tabs.
	const n = 16
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.must("", "Target.createTarget", map[string]any{"url": fmt.Sprintf("%s/tab-%d", hostile.URL, i)})
		}()
		if i%4 == 3 {
			wg.Wait()
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for hostile.Hits.Load() < n && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := hostile.Hits.Load(); got < n {
		t.Fatalf("the hostile page was loaded %d times of %d", got, n)
	}
	time.Sleep(500 * time.Millisecond)
	if got := forbidden.Hits.Load(); got > 0 {
		t.Fatalf("the first moments of %d new tabs reached %s %d times", n, forbidden.URL, got)
	}
}

// TestRedTeamTabsOfAnEndingClientStayHeld: a client held off private
// addresses has four tabs on a hostile page that asks another loopback
// address every 20 ms, and ends. Its tabs close with it, but its policy
// was dropped at once while they closed one after the other (each quietly,
// up to 500 ms): the tabs still waiting ran free and reached the address.
// The policy now ends once its tabs are gone, and they close together.
func TestRedTeamTabsOfAnEndingClientStayHeld(t *testing.T) {
	srv, tok := endpoint(t)
	forbidden := testsite.NewCounter(t, "127.0.0.2", "secret")
	hostile := testsite.NewCounter(t, "127.0.0.1", fmt.Sprintf(`<!doctype html><title>hostile</title>`+
		`<script>setInterval(() => fetch("%s/tick", {mode: "no-cors"}).catch(() => {}), 20)</script>`, forbidden.URL))
	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}, "blockPrivate": true, "privateAllowed": []string{"127.0.0.1"}})
	const n = 4
	for i := range n {
		_, sid := a.open(fmt.Sprintf("%s/tab-%d", hostile.URL, i))
		a.eval(sid, "document.title") // loaded
	}
	time.Sleep(300 * time.Millisecond)
	if got := forbidden.Hits.Load(); got > 0 {
		t.Fatalf("the held tabs reached %s %d times while the client was there", forbidden.URL, got)
	}
	a.ws.CloseNow()
	// Closed within about a second (each at most 500 ms to freeze); a tab
	// left open would go on asking.
	time.Sleep(1500 * time.Millisecond)
	time.Sleep(500 * time.Millisecond)
	if got := forbidden.Hits.Load(); got > 0 {
		t.Fatalf("the tabs of a client that ended reached %s %d times as they closed", forbidden.URL, got)
	}
}

// TestRedTeamRefusedNewTabLeavesNoTab: a tab opened for a held client
// opens blank and then loads its URL; a URL Chrome refuses to load from an
// extension (javascript:) failed the command but left the blank tab open
// in the person's browser.
func TestRedTeamRefusedNewTabLeavesNoTab(t *testing.T) {
	srv, tok := endpoint(t)
	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{}, "blockPrivate": true})
	// The tabs by id: earlier tests' tabs may still be closing, so a count
	// of them says nothing.
	tabs := func() map[int64]string {
		res, err := env.Bridge.Call(t.Context(), wire.Targets, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		var v wire.TargetsResult
		if err := jsonv2.Unmarshal(res, &v, wire.Options); err != nil {
			t.Fatal(err)
		}
		m := map[int64]string{}
		for _, ti := range v.Targets {
			m[ti.TabID] = ti.URL
		}
		return m
	}
	before := tabs()
	if _, err := a.call("", "Target.createTarget", map[string]any{"url": "javascript:alert(1)"}); err == nil {
		t.Fatal("Chrome opened a tab on a javascript: URL")
	}
	for id, u := range tabs() {
		if _, ok := before[id]; !ok {
			t.Errorf("a refused createTarget left tab %d (%s)", id, u)
		}
	}
}
