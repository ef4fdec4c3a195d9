package extcdp_test

import (
	"context"
	"strings"
	"testing"
	"time"

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
		time.Sleep(300 * time.Millisecond)
		u.Eval(ctx, person, `location.href = "`+site.URL+`/form?history-allowed"`)
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
		var sid string
		for range 50 {
			res, err := a.call("", "Target.attachToTarget", map[string]any{"targetId": person, "flatten": true})
			if err == nil {
				sid = field(res, "sessionId")
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if sid == "" {
			t.Fatal("A could not attach to the person's tab at the allowed page")
		}
		if got := a.eval(sid, "location.href"); !strings.Contains(got, "history-allowed") {
			t.Fatalf("the person's tab is at %s", got)
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
