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

// TestRedTeamDownloadNamesStayInTheDirectory: a hostile page names its
// downloads to climb out of the directory a program asked for
// (Browser.setDownloadBehavior allow, where the relay moves the finished
// file itself under the name Chrome gave it), or to land on a hidden file
// of it. Each file must end in that directory, as a new file.
func TestRedTeamDownloadNamesStayInTheDirectory(t *testing.T) {
	t.Parallel() // a download test: its own servers and files; it waits on them beside the others
	names := []string{
		`../../escape.txt`, `..\\..\\escape.txt`, `/tmp/escape.txt`, `..`, `.`, ``,
		"a\x00b.txt", "line\r\nX-Injected: 1.txt", `.bashrc`, `.profile`,
		strings.Repeat("L", 400) + ".txt", `CON`, `%2e%2e%2fescape.txt`,
		`keep.txt`,
	}
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var i int
		if _, err := fmt.Sscanf(r.URL.Path, "/dl/%d", &i); err == nil && i < len(names) {
			// Written raw: Go's header check would refuse a CR or NUL.
			w.Header()["Content-Disposition"] = []string{`attachment; filename="` + strings.NewReplacer("\r", "", "\n", "", "\x00", "").Replace(names[i]) + `"; filename*=UTF-8''` + urlEscape(names[i])}
			w.Header().Set("Content-Type", "application/octet-stream")
			fmt.Fprintf(w, "forged %d", i)
			return
		}
		fmt.Fprintf(w, `<!doctype html><title>hostile</title><a id=a href="/dl/%s">download</a>`, r.URL.RawQuery)
	}))
	defer hostile.Close()
	parent := t.TempDir()
	dir := filepath.Join(parent, "in", "downloads")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{".bashrc", ".profile", "keep.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("mine"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx := newTab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(hostile.URL+"/")); err != nil {
		t.Fatal(err)
	}
	b := chromedp.FromContext(ctx).Browser
	if _, err := cdp.Call(ctx, b, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir, EventsEnabled: new(true),
	}); err != nil {
		t.Fatal(err)
	}
	for i := range names {
		// A tab and a click each, so that Chrome does not hold back a
		// page's second automatic download.
		progress := chromedp.BrowserEvents(ctx, browser.DownloadProgress)
		tctx, cancel := chromedp.NewContext(ctx)
		defer cancel()
		if err := chromedp.Do(tctx, chromedp.Navigate(fmt.Sprintf("%s/?%d", hostile.URL, i)), chromedp.Click(chromedp.CSS("#a"))); err != nil {
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
			if ev.State == browser.DownloadProgressStateCanceled {
				break
			}
		}
		if got == "" {
			t.Logf("%q: canceled", names[i])
			continue
		}
		t.Logf("%q -> %s", names[i], filepath.Base(got))
		if filepath.Dir(got) != dir {
			t.Errorf("%q: the download went to %s, outside %s", names[i], got, dir)
		}
		if b, err := os.ReadFile(got); err != nil || string(b) != fmt.Sprintf("forged %d", i) {
			t.Errorf("%q: %s holds %q (%v)", names[i], got, b, err)
		}
	}
	for _, f := range []string{".bashrc", ".profile", "keep.txt"} {
		if b, _ := os.ReadFile(filepath.Join(dir, f)); string(b) != "mine" {
			t.Errorf("a download replaced %s: it holds %q", f, b)
		}
	}
	filepath.WalkDir(parent, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Dir(p) != dir {
			t.Errorf("a download wrote %s, outside %s", p, dir)
		}
		return nil
	})
	if _, err := os.Stat("/tmp/escape.txt"); err == nil {
		t.Errorf("/tmp/escape.txt exists")
	}
}

func urlEscape(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
