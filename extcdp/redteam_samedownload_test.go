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

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
)

// The person downloads a
// file (slow, in progress) in a tab of their own. A program downloads the
// same URL in its own tab, with a downloadPath. The relay links a tab's
// Page.downloadWillBegin to chrome.downloads' record by URL alone, and so
// may give the program the person's download: its events and its file,
// moved out of the person's Downloads into the program's directory.
func TestRedTeamDownloadOfTheSameURLStaysThePersons(t *testing.T) {
	t.Parallel() // a download test: its own servers and files; it waits on them beside the others
	var n atomic.Int64
	dl := loopbackServer(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/file":
			i := n.Add(1)
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Disposition", `attachment; filename="statement.bin"`)
			who := "PERSONS-DOWNLOAD"
			wait := 6 * time.Second
			if i > 1 {
				who, wait = "PROGRAMS-DOWNLOAD", 500*time.Millisecond
			}
			w.Header().Set("Content-Length", "4096")
			body := []byte(strings.Repeat(who+" ", 4096/len(who+" ")+1))[:4096]
			w.Write(body[:1024])
			w.(http.Flusher).Flush()
			time.Sleep(wait)
			w.Write(body[1024:])
		default:
			fmt.Fprint(w, "<!doctype html><title>dl</title>")
		}
	}))

	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	person, err := u.OpenTab(ctx, dl.URL+"/page")
	if err != nil {
		t.Fatal(err)
	}
	closeUserTab(t, person)
	time.Sleep(500 * time.Millisecond)

	srv, tok := endpoint(t)
	b := dialRawTo(t, srv, tok)
	dir := t.TempDir()
	b.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "allow", "downloadPath": dir, "eventsEnabled": true})
	_, sid := b.open(dl.URL + "/page?program")
	b.must(sid, "Page.enable", nil)
	b.eval(sid, "1")

	// The person starts theirs.
	if _, err := u.Eval(ctx, person, `(() => { const a = document.createElement('a'); a.href = '/file'; a.download = ''; document.body.appendChild(a); a.click(); return 1 })()`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // chrome.downloads reports it in progress
	// The program starts the same URL.
	b.eval(sid, `(() => { const a = document.createElement('a'); a.href = '/file'; a.download = ''; document.body.appendChild(a); a.click(); return 1 })()`)

	deadline := time.Now().Add(20 * time.Second)
	var completed []string
	for time.Now().Before(deadline) && len(completed) == 0 {
		b.mu.Lock()
		for _, e := range b.events {
			if e.Method == "Browser.downloadProgress" && strings.Contains(string(e.Params), `"completed"`) {
				completed = append(completed, string(e.Params))
			}
		}
		b.mu.Unlock()
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(8 * time.Second) // the person's finishes too
	b.mu.Lock()
	for _, e := range b.events {
		if strings.HasPrefix(e.Method, "Browser.download") {
			t.Logf("program heard %s %s", e.Method, e.Params)
		}
	}
	b.mu.Unlock()
	t.Logf("requests to the server: %d", n.Load())
	files, _ := os.ReadDir(dir)
	for _, f := range files {
		data, _ := os.ReadFile(filepath.Join(dir, f.Name()))
		t.Logf("in the program's directory: %s (%d bytes, %.20q)", f.Name(), len(data), data)
		if strings.Contains(string(data), "PERSONS-DOWNLOAD") {
			t.Errorf("the person's own download (started in their own tab) was moved into the program's downloadPath as %s", f.Name())
		}
	}
	b.mu.Lock()
	for _, e := range b.events {
		if e.Method == "Browser.downloadProgress" && strings.Contains(string(e.Params), `"completed"`) {
			var p struct {
				FilePath string `json:"filePath"`
			}
			jsonv2.Unmarshal(e.Params, &p, wire.Options)
			if data, err := os.ReadFile(p.FilePath); err == nil && strings.Contains(string(data), "PERSONS-DOWNLOAD") {
				t.Errorf("the program was told of the person's download as its own: %s", e.Params)
			}
		}
	}
	b.mu.Unlock()
}
