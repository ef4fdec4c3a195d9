package extcdp_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
)

// TestRedTeamDownloadOverwritesNothing: a program downloads into its own
// directory (Browser.setDownloadBehavior allow), where its earlier
// downloads and its other files are. A hostile page names its download
// after one of them (Content-Disposition). Chrome gives the new file
// another name ("name (1).ext") rather than replace one; the relay, which
// moves the finished file there itself, must too.
func TestRedTeamDownloadOverwritesNothing(t *testing.T) {
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/dl" {
			w.Header().Set("Content-Disposition", `attachment; filename="invoice.pdf"`)
			w.Header().Set("Content-Type", "application/octet-stream")
			fmt.Fprint(w, "forged by the page")
			return
		}
		fmt.Fprint(w, `<!doctype html><title>hostile</title><a id=a href="/dl">x</a>`)
	}))
	defer hostile.Close()
	dir := t.TempDir()
	victim := filepath.Join(dir, "invoice.pdf")
	if err := os.WriteFile(victim, []byte("the real invoice"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := newTab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(hostile.URL+"/")); err != nil {
		t.Fatal(err)
	}
	b := chromedp.FromContext(ctx).Browser
	progress := chromedp.BrowserEvents(ctx, browser.DownloadProgress)
	if _, err := cdp.Call(ctx, b, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir, EventsEnabled: new(true),
	}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('a').click()`)); err != nil {
		t.Fatal(err)
	}
	var got string
	for ev, err := range progress {
		if err != nil {
			t.Fatal(err)
		}
		if ev.State == browser.DownloadProgressStateCompleted {
			got = ev.FilePath
			break
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "the real invoice" {
		t.Errorf("the page's download replaced %s: it holds %q", victim, b)
	}
	if filepath.Dir(got) != dir || got == victim {
		t.Errorf("the download went to %s, want a new file in %s", got, dir)
	}
	if b, err := os.ReadFile(got); err != nil || string(b) != "forged by the page" {
		t.Errorf("the download at %s holds %q (%v)", got, b, err)
	}
	if !strings.HasPrefix(filepath.Base(got), "invoice") {
		t.Errorf("the download is named %s, want the page's name made unique", filepath.Base(got))
	}
}
