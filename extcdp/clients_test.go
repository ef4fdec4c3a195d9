package extcdp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/livetab/livetab/extcdp"
)

// TestClients runs unmodified Playwright and Puppeteer against the relay's
// CDP endpoint. They use the tabs that were open before them and must
// leave them open.
func TestClients(t *testing.T) {
	srv, tok := endpoint(t)
	before := pageTargets(t)
	site.CheckClients(t, extcdp.RelayFor(env.Bridge).BrowserURL(strings.TrimPrefix(srv.URL, "http://"), tok))
	after := pageTargets(t)
	for id, url := range before {
		if after[id] != url {
			t.Errorf("the user's tab %s (%s) is now %q after the clients left", id, url, after[id])
		}
	}
}

// pageTargets lists the browser's pages as Chrome sees them.
func pageTargets(t *testing.T) map[string]string {
	t.Helper()
	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	ts, err := u.Targets(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string]string{}
	for _, ti := range ts {
		if ti.Type == "page" && !strings.HasPrefix(ti.URL, "chrome-extension://") {
			pages[ti.TargetID] = ti.URL
		}
	}
	return pages
}
