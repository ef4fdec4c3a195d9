package extcdp_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Attacks the join of a download to the new tab a page of a program's tab
// opened (extension/lib/loads.js): the extension notes each such tab's
// load by URL and, for 10 s, joins the first download of that URL to it,
// and the relay then denies it as the program's. A new tab whose load is
// no download (the URL answered with a page) leaves its note behind; the
// person then downloads that URL in a tab of their own, which no client
// drives, and the program's deny cancels the PERSON's download. The
// server counts who asked and whether the browser aborted the transfer.
func TestRedTeamPersonsDownloadNotJoinedToAProgramsPopup(t *testing.T) {
	name := fmt.Sprintf("yy-join-%d.bin", time.Now().UnixNano())
	var n atomic.Int64
	var mu sync.Mutex
	var log []string
	note := func(f string, a ...any) { mu.Lock(); log = append(log, fmt.Sprintf(f, a...)); mu.Unlock() }
	srv := loopbackServer(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/dl/") {
			fmt.Fprintf(w, `<!doctype html><title>dl</title><a id="x" href="/dl/%s" target="_blank">report</a>`, name)
			return
		}
		if n.Add(1) == 1 {
			// The program's new tab: the report as a page.
			note("popup load (referer %s)", r.Referer())
			fmt.Fprint(w, "<!doctype html><title>report</title><p>the report")
			return
		}
		personsSlowDownload(w, r, name, note)
	}))
	base := srv.URL

	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	person, err := u.OpenTab(ctx, base+"/page?person")
	if err != nil {
		t.Fatal(err)
	}
	closeUserTab(t, person)
	time.Sleep(500 * time.Millisecond)

	s, tok := endpoint(t)
	b := dialRawTo(t, s, tok)
	b.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "deny", "eventsEnabled": true})
	tid, sid := b.open(base + "/page?program")
	t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": tid}) })
	b.must(sid, "Page.enable", nil)
	b.eval(sid, "1")
	// The program's page opens the report in a new tab (a page, no download).
	b.must(sid, "Runtime.evaluate", map[string]any{"expression": "document.getElementById('x').click(), 1", "userGesture": true})
	time.Sleep(1500 * time.Millisecond)

	// The person downloads the same URL in their own tab, seconds later.
	if _, err := u.Eval(ctx, person, fmt.Sprintf(clickDownload, "/dl/"+name)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second)
	mu.Lock()
	for _, l := range log {
		t.Logf("server: %s", l)
	}
	aborted := strings.Contains(strings.Join(log, "\n"), "ABORTED")
	mu.Unlock()
	b.mu.Lock()
	for _, e := range b.events {
		if strings.Contains(e.Method, "ownload") {
			t.Logf("program heard %s %s", e.Method, e.Params)
		}
	}
	b.mu.Unlock()
	var personsFile bool
	files, _ := os.ReadDir(personsDownloads())
	for _, f := range files {
		if strings.HasPrefix(f.Name(), strings.TrimSuffix(name, ".bin")) {
			data, _ := os.ReadFile(filepath.Join(personsDownloads(), f.Name()))
			t.Logf("in Downloads: %s %d bytes", f.Name(), len(data))
			if len(data) == 4096 {
				personsFile = true
			}
			os.Remove(filepath.Join(personsDownloads(), f.Name()))
		}
	}
	if n.Load() < 2 {
		t.Fatalf("the setup did not happen (requests %d): this run shows nothing", n.Load())
	}
	if aborted || !personsFile {
		t.Errorf("the program's deny canceled the person's own download in the person's own tab (aborted %v, file in Downloads %v)", aborted, personsFile)
	}
}
