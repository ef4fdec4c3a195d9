package extcdp_test

import (
	"context"
	"strings"
	"testing"
)

// TestRedTeamClientsIsolatedThroughHighLevelAPIs: two Playwright clients and a Puppeteer client on
// one endpoint; A's tabs, events, downloads, dialogs and policy reach
// neither, and B's default-context close and P's browser.close leave A's
// tabs and the person's open.
func TestRedTeamClientsIsolatedThroughHighLevelAPIs(t *testing.T) {
	srv, tok := endpoint(t)
	cdpURL := env.Relay.BrowserURL(strings.TrimPrefix(srv.URL, "http://"), tok)
	personURL := site.URL + "/form?isolationPerson"
	id := userTab(t, personURL)
	t.Cleanup(func() {
		if u, err := env.User(context.Background()); err == nil {
			u.CloseTab(context.Background(), id)
			u.Close()
		}
	})
	site.RunClient(t, "redteam-isolation.test.js", cdpURL, "CROSS_URL="+site.CrossURL, "PERSON_URL="+personURL)
	if got := pageTargets(t)[id]; got != personURL {
		t.Fatalf("the person's tab %s is now %q, was %q", id, got, personURL)
	}
}
