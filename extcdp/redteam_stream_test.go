package extcdp_test

import (
	"strings"
	"testing"
)

// TestRedTeamStreamOfAnotherClient: client A prints its tab to a PDF
// stream (Page.printToPDF, ReturnAsStream); client B, on a tab of its own,
// reads the stream's handle (Chrome numbers them) with IO.read. Held:
// Chrome keeps streams per tab.
func TestRedTeamStreamOfAnotherClient(t *testing.T) {
	srv, tok := endpoint(t)
	a, b := dialRawTo(t, srv, tok), dialRawTo(t, srv, tok)
	_, sa := a.open(site.URL + "/form?stream-of-a")
	a.eval(sa, "document.title = 'secret-of-A', 1")
	res := a.must(sa, "Page.printToPDF", map[string]any{"transferMode": "ReturnAsStream"})
	handle := field(res, "stream")
	t.Logf("A's stream: %q", handle)
	_, sb := b.open(site.URL + "/form?reader-b")
	b.eval(sb, "1")
	got, err := b.call(sb, "IO.read", map[string]any{"handle": handle, "size": 100})
	t.Logf("B's IO.read of A's stream: %.200s %v", got, err)
	if err == nil && strings.Contains(string(got), "data") {
		t.Errorf("B read A's stream %s from its own tab: %.200s", handle, got)
	}
	if _, err := a.call(sa, "IO.read", map[string]any{"handle": handle, "size": 100}); err != nil {
		t.Errorf("A cannot read its own stream: %v", err)
	}
}
