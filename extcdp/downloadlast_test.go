package extcdp_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Two programs drive the person's tab, each with a directory of its own
// (Browser.setDownloadBehavior). The tab's download goes to the directory
// set last, as Chrome's last setDownloadBehavior wins; it went to either,
// by the order of a Go map (red team).
func TestDownloadGoesToTheDirectorySetLast(t *testing.T) {
	var stem = fmt.Sprintf("setlast-%d", time.Now().UnixNano())
	srv := loopbackServer(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/file" {
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Disposition", `attachment; filename="`+stem+"-"+r.URL.Query().Get("n")+`.bin"`)
			fmt.Fprint(w, "a file")
			return
		}
		fmt.Fprint(w, `<!doctype html><title>page</title>`)
	}))
	t.Cleanup(func() { landedNamed(stem, 0) })
	s, tok := endpoint(t)
	a, b := dialRawTo(t, s, tok), dialRawTo(t, s, tok)
	dirs := []string{t.TempDir(), t.TempDir()}
	for round, last := range []int{1, 0, 1, 0} {
		// A tab of the person's each round: Chrome asks the person before
		// a page's second download.
		person := personsTab(t, fmt.Sprintf("%s/page?n=%d", srv.URL, round))
		sa := a.attach(person)
		b.attach(person)
		for _, i := range []int{1 - last, last} {
			[]*rawClient{a, b}[i].must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "allow", "downloadPath": dirs[i]})
		}
		name := fmt.Sprintf("%s-%d.bin", stem, round)
		a.eval(sa, fmt.Sprintf("location.href = '/file?n=%d', 1", round))
		var got []string
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			got = nil
			for i, d := range dirs {
				if _, err := os.Stat(filepath.Join(d, name)); err == nil {
					got = append(got, fmt.Sprint(i))
				}
			}
			if len(got) > 0 {
				break
			}
		}
		if len(got) != 1 || got[0] != fmt.Sprint(last) {
			t.Fatalf("round %d: %s is in the directories of programs %v, want only in that of program %d, which set its directory last", round, name, got, last)
		}
	}
}
