package extcdp_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The person, in a tab no program drives, downloads a file of another site
// from their page: the item's referrer is their page's origin, as Chrome
// sends it for a request to another site. Within the same second a
// program that denies downloads begins the same URL in its tab, of a third
// site. When a frame's download could join its tab by a referrer that is
// "the page of no other tab", an origin was no tab's page: the relay
// joined the person's item to the program's download, told the program of
// the person's file, and the program's own download landed in the
// person's folder uncanceled (red team, 2 of 2).
func TestRedTeamPersonsCrossSiteDownloadStaysThePersons(t *testing.T) {
	t.Parallel() // a download test: its own servers and files; it waits on them beside the others
	var n atomic.Int64
	name := fmt.Sprintf("xpersons-%d.bin", time.Now().UnixNano())
	files := loopbackServer(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/file") {
			i := n.Add(1)
			who := "PERSONS-DOWNLOAD"
			wait := 4 * time.Second
			if i > 1 {
				who, wait = "PROGRAMS-DOWNLOAD", 200*time.Millisecond
			}
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
			w.Header().Set("Content-Length", "4096")
			body := []byte(strings.Repeat(who+" ", 4096/len(who+" ")+1))[:4096]
			w.Write(body[:1024])
			w.(http.Flusher).Flush()
			time.Sleep(wait)
			w.Write(body[1024:])
			return
		}
		fmt.Fprint(w, "<!doctype html><title>files</title>")
	}))
	fileURL := "http://localhost:" + files.URL[strings.LastIndex(files.URL, ":")+1:] + "/file"
	pages := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<!doctype html><title>p</title><body>")
	})
	personSite := loopbackServer(t, "127.0.0.2", pages)
	programSite := loopbackServer(t, "127.0.0.3", pages)

	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	person, err := u.OpenTab(ctx, personSite.URL+"/mine")
	if err != nil {
		t.Fatal(err)
	}
	closeUserTab(t, person)
	time.Sleep(500 * time.Millisecond)

	srv, tok := endpoint(t)
	b := dialRawTo(t, srv, tok)
	b.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "deny", "eventsEnabled": true})
	tid, sid := b.open(programSite.URL + "/prog")
	t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": tid}) })
	b.must(sid, "Page.enable", nil)
	b.eval(sid, "1")

	click := fmt.Sprintf(`(() => { const a = document.createElement('a'); a.href = %q; document.body.appendChild(a); a.click(); return 1 })()`, fileURL)
	if _, err := u.Eval(ctx, person, click); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	b.eval(sid, click)

	time.Sleep(8 * time.Second)
	b.mu.Lock()
	for _, e := range b.events {
		if strings.HasPrefix(e.Method, "Browser.download") {
			t.Logf("program heard %s %s", e.Method, e.Params)
		}
	}
	b.mu.Unlock()
	t.Logf("requests to the server: %d", n.Load())
	dir := personsDownloads()
	var persons, programs int
	ents, _ := os.ReadDir(dir)
	for _, f := range ents {
		if !strings.HasPrefix(f.Name(), strings.TrimSuffix(name, ".bin")) {
			continue
		}
		data, _ := os.ReadFile(filepath.Join(dir, f.Name()))
		t.Logf("in the person's Downloads: %s (%d bytes)", f.Name(), len(data))
		if strings.Contains(string(data), "PERSONS-DOWNLOAD") && len(data) == 4096 {
			persons++
		}
		if strings.Contains(string(data), "PROGRAMS-DOWNLOAD") {
			programs++
		}
		os.Remove(filepath.Join(dir, f.Name()))
	}
	if persons == 0 {
		t.Errorf("the person's own download (their page, a file of another site) did not complete: canceled by the program's deny")
	}
	if programs > 0 {
		t.Errorf("the program's download landed in the person's Downloads folder despite its deny")
	}
}
