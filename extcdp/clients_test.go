package extcdp_test

import (
	"strings"
	"testing"

	"github.com/livetab/livetab/extcdp"
)

// TestClients runs unmodified Playwright and Puppeteer against the relay's
// CDP endpoint.
func TestClients(t *testing.T) {
	srv, tok := endpoint(t)
	site.CheckClients(t, extcdp.RelayFor(env.Bridge).BrowserURL(strings.TrimPrefix(srv.URL, "http://"), tok))
}
