package policy

import (
	"context"
	"strings"
	"testing"

	"github.com/livetab/livetab/page"
)

// Read-only mode opens no tab, not even a blank one, and saves no bytes the
// agent wrote (a data: URL); an http URL of the page and an element can
// still be captured.
func TestReadOnlyOpensAndWritesNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := &Policy{AllowDomains: []string{"example.com"}, ReadOnly: true, DownloadDir: dir}
	for _, target := range []string{"", "about:blank", "https://example.com/"} {
		err := p.CheckAction(ctx, page.Action{Kind: page.KindNavigate, Op: "open", Target: target})
		denied(t, err, RuleReadOnly)
		if !strings.Contains(err.Error(), "opening a tab") {
			t.Errorf("open %q: %v", target, err)
		}
	}
	for _, u := range []string{"data:text/plain,hello", " DATA:image/png;base64,AAAA"} {
		err := p.CheckAction(ctx, page.Action{Kind: page.KindCapture, Op: "capture", URL: "https://example.com/", Target: u})
		denied(t, err, RuleReadOnly)
		if !strings.Contains(err.Error(), "data: URL") {
			t.Errorf("capture %q: %v", u, err)
		}
	}
	if err := p.CheckAction(ctx, page.Action{Kind: page.KindCapture, Op: "capture", URL: "https://example.com/", Ref: page.Ref{Index: 1}}); err != nil {
		t.Errorf("capturing an element in read-only mode: %v", err)
	}
	// Without read-only, both are allowed.
	p = &Policy{AllowDomains: []string{"example.com"}, DownloadDir: dir}
	if err := p.CheckAction(ctx, page.Action{Kind: page.KindCapture, Op: "capture", URL: "https://example.com/", Target: "data:text/plain,hello"}); err != nil {
		t.Errorf("a data: URL without read-only: %v", err)
	}
}
