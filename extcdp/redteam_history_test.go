package extcdp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamHistoryLeavesTheDomains: the person's tab was at a site
// outside client A's domains, then at one inside them, where A attaches.
// A goes back in the tab's history with Page.navigateToHistoryEntry: a
// history load may come from the back/forward cache without a request, so
// no rule of the extension holds it, and A read the page outside its
// domains before the relay heard the tab moved (5 of 5 runs). A hostile
// page's history.back() did the same to a client with the Page domain on
// (as chromedp, Playwright and Puppeteer have it): 4 of 5 runs.
func TestRedTeamHistoryLeavesTheDomains(t *testing.T) {
	srv, tok := endpoint(t)
	for _, how := range []string{"history.back", "Page.navigateToHistoryEntry"} {
		person := userTab(t, site.CrossURL+"/form?history-secret")
		closeUserTab(t, person)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		u, err := env.User(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// A navigation before the page has loaded replaces its entry (as
		// the HTML standard says): under load 300 ms were not enough, and
		// there was no entry to go back to.
		for i := 0; ; i++ {
			v, err := u.Eval(ctx, person, `location.href.includes("history-secret") && document.readyState === "complete"`)
			if err == nil && string(v) == "true" {
				break
			}
			if i == 100 {
				t.Fatalf("the person's tab did not load the secret page: %s %v", v, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
		u.Eval(ctx, person, `setTimeout(() => { location.href = "`+site.URL+`/form?history-allowed" }, 0), 1`)
		time.Sleep(time.Second)
		u.Close()
		cancel()

		a := dialRawTo(t, srv, tok)
		// The extension's reports of the tab come in order but may lag
		// under load: one of the secret page, heard after the attach,
		// would end A's session there (as it must) before the attack.
		for i := 0; ; i++ {
			res, err := a.call("", "Target.getTargetInfo", map[string]any{"targetId": person})
			if err == nil && strings.Contains(string(res), "history-allowed") {
				break
			}
			if i == 100 {
				t.Fatalf("the relay never heard the person's tab at the allowed page: %s %v", res, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
		a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}})
		// A report of the tab that lags under load (a main-frame commit
		// heard after the attach) ends A's session there, as it must: attach
		// again until a session holds at the allowed page.
		var sid string
		for i := 0; ; i++ {
			if i == 50 {
				t.Fatal("A could not attach to the person's tab at the allowed page")
			}
			res, err := a.call("", "Target.attachToTarget", map[string]any{"targetId": person, "flatten": true})
			if err != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			sid = field(res, "sessionId")
			at, err := a.call(sid, "Runtime.evaluate", map[string]any{"expression": "location.href", "returnByValue": true})
			if err == nil && strings.Contains(string(at), "history-allowed") {
				break
			}
			if err == nil {
				t.Fatalf("the person's tab is at %s", at)
			}
			time.Sleep(100 * time.Millisecond)
		}
		hist := a.must(sid, "Page.getNavigationHistory", nil)
		t.Logf("%s: the history A reads: %.300s", how, hist)
		a.must(sid, "Page.enable", nil)
		switch how {
		case "history.back":
			a.must(sid, "Runtime.evaluate", map[string]any{"expression": "setTimeout(() => history.back(), 0), 1"})
		default:
			var h struct {
				CurrentIndex int `json:"currentIndex"`
				Entries      []struct {
					ID int `json:"id"`
				} `json:"entries"`
			}
			unmarshal(hist, &h)
			if h.CurrentIndex < 1 {
				t.Fatalf("no entry to go back to: %s", hist)
			}
			res, err := a.call(sid, "Page.navigateToHistoryEntry", map[string]any{"entryId": h.Entries[h.CurrentIndex-1].ID})
			t.Logf("navigateToHistoryEntry: %s %v", res, err)
		}
		read := ""
		for range 40 {
			m, err := a.send(sid, "Runtime.evaluate", map[string]any{"expression": "location.href + ' ' + document.title", "returnByValue": true})
			if err != nil || m.Error != nil {
				break
			}
			if strings.Contains(string(m.Result), "history-secret") {
				read = string(m.Result)
				break
			}
			time.Sleep(25 * time.Millisecond)
		}
		if read != "" {
			t.Errorf("%s: A, held to 127.0.0.1, read the person's page outside its domains: %s", how, read)
		}
		a.ws.CloseNow()
	}
}

// TestRedTeamResetHistoryOfThePersonsTab: a client attached to a tab the
// person opened sends Page.resetNavigationHistory. Chrome wipes the tab's
// back/forward list: the person's Back button would no longer lead where
// they came from. The relay refuses it there and says to open a tab; on a
// tab the client created it still resets.
func TestRedTeamResetHistoryOfThePersonsTab(t *testing.T) {
	entries := func(c *rawClient, sid string) int {
		t.Helper()
		var h struct {
			Entries []struct{} `json:"entries"`
		}
		jsonv2.Unmarshal(c.must(sid, "Page.getNavigationHistory", nil), &h, wire.Options)
		return len(h.Entries)
	}
	twoPages := func(c *rawClient, sid, name string) {
		t.Helper()
		if err := c.navigate(sid, site.URL+"/form?"+name+"-2"); err != nil {
			t.Fatal(err)
		}
		c.eval(sid, "document.readyState")
		if n := entries(c, sid); n < 2 {
			t.Fatalf("%s: %d history entries after a navigation, want 2", name, n)
		}
	}
	person := userTab(t, site.URL+"/form?reset-history-1")
	closeUserTab(t, person)
	a := dialRaw(t)
	sid := a.attach(person)
	a.eval(sid, "1")
	twoPages(a, sid, "reset-history")
	_, err := a.call(sid, "Page.resetNavigationHistory", nil)
	if n := entries(a, sid); n < 2 {
		t.Errorf("Page.resetNavigationHistory (%v) wiped the history of the person's tab: %d entries left", err, n)
	}
	if err == nil || !strings.Contains(err.Error(), "Target.createTarget") {
		t.Errorf("Page.resetNavigationHistory on the person's tab: %v, want a refusal that says to open a tab", err)
	}

	_, own := a.open(site.URL + "/form?own-reset-history-1")
	a.eval(own, "1")
	twoPages(a, own, "own-reset-history")
	a.must(own, "Page.resetNavigationHistory", nil)
	if n := entries(a, own); n != 1 {
		t.Errorf("Page.resetNavigationHistory on the client's own tab left %d entries, want 1", n)
	}
}
