package extcdp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/extcdp"
)

// TestRedTeamWedgedInterceptionLetsThePersonsRequestGo: a client
// intercepts the requests of a tab the person opened (Fetch.enable, as
// Playwright's page.route and Puppeteer's setRequestInterception do) and
// never answers, while it stays connected and answers pings: a route
// handler whose promise never settles. The person's page fetched and
// waited for as long as the program ran (red team with Playwright, 2 of
// 2; here with a raw client). A request of the person's tab held past the
// bound goes on.
func TestRedTeamWedgedInterceptionLetsThePersonsRequestGo(t *testing.T) {
	const bound = 2 * time.Second
	defer extcdp.SetHeldRequestBound(bound)()
	srv, tok := endpoint(t)
	id := userTab(t, site.URL+"/form?wedged-fetch")
	closeUserTab(t, id)
	a := dialRawTo(t, srv, tok)
	sa := a.attach(id)
	a.must(sa, "Fetch.enable", map[string]any{"patterns": []map[string]any{{"urlPattern": "*"}}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	u, err := env.User(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	start := time.Now()
	v, err := u.Eval(ctx, id, `fetch('/form?wedged-fetch-person').then(r => r.status)`)
	took := time.Since(start)
	t.Logf("the person's fetch: %s %v after %v", v, err, took.Round(time.Millisecond))
	if err != nil || !strings.Contains(string(v), "200") || took > bound+3*time.Second {
		t.Fatalf("the person's fetch on a tab whose interceptor never answers: %s %v after %v, want 200 within %v", v, err, took, bound+3*time.Second)
	}
	if !a.hasEvent("Fetch.requestPaused", "wedged-fetch-person") {
		t.Fatal("the client never held the person's request: this run shows nothing")
	}
}
