package extcdp_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// personsDownloads is the person's Downloads folder in the test browser.
func personsDownloads() string {
	home, _ := os.UserHomeDir()
	return filepath.Join(home, "Downloads")
}

// denyServer serves /page (HTML) and /file/<name>: a download whose body
// ends after the delay the request's Referer (page) names: "person" gets
// personWait, others programWait. It records each request's fate.
type denyServer struct {
	mu  sync.Mutex
	log []string
}

func (s *denyServer) note(f string, a ...any) {
	s.mu.Lock()
	s.log = append(s.log, fmt.Sprintf(f, a...))
	s.mu.Unlock()
}

func (s *denyServer) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

func denyServe(t *testing.T, personWait, programWait time.Duration) (*denyServer, string) {
	s := &denyServer{}
	srv := loopbackServer(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/file/") {
			fmt.Fprint(w, "<!doctype html><title>dl</title><body>page</body>")
			return
		}
		who, wait := "PROGRAM", programWait
		if strings.Contains(r.Referer(), "person") {
			who, wait = "PERSON", personWait
		}
		name := strings.TrimPrefix(r.URL.Path, "/file/")
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
		body := []byte(strings.Repeat(who+"-BYTES ", 4096/len(who+"-BYTES ")+1))[:4096]
		w.Header().Set("Content-Length", "4096")
		w.Write(body[:1024])
		w.(http.Flusher).Flush()
		s.note("%s request began (referer %s)", who, r.Referer())
		select {
		case <-time.After(wait):
		case <-r.Context().Done():
			s.note("%s request ABORTED by the browser before its end", who)
			return
		}
		_, err := w.Write(body[1024:])
		w.(http.Flusher).Flush()
		s.note("%s request sent in full (err %v)", who, err)
	}))
	return s, srv.URL
}

const clickDownload = `(() => { const a = document.createElement('a'); a.href = %q; a.download = ''; document.body.appendChild(a); a.click(); return 1 })()`

// The person downloads a
// file (it takes a few seconds) in a tab of their own, which no client
// drives. A program that denies downloads starts a download of the same
// URL in its own tab a fraction of a second later. The relay joins the
// program's Page.downloadWillBegin to the chrome.downloads item by URL and
// by a start no more than 1 s before: the person's item, reported first,
// was the one it found, and the program's deny canceled the PERSON's
// download.
func TestRedTeamDenyLeavesThePersonsDownload(t *testing.T) {
	t.Parallel() // a download test: its own servers and files; it waits on them beside the others
	name := fmt.Sprintf("deny-statement-%d.bin", time.Now().UnixNano())
	s, base := denyServe(t, 4*time.Second, 4*time.Second)
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

	srv, tok := endpoint(t)
	b := dialRawTo(t, srv, tok)
	b.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "deny", "eventsEnabled": true})
	tid, sid := b.open(base + "/page?program")
	t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": tid}) })
	b.must(sid, "Page.enable", nil)
	b.eval(sid, "1")

	if _, err := u.Eval(ctx, person, fmt.Sprintf(clickDownload, "/file/"+name)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // chrome.downloads reports the person's in progress
	b.eval(sid, fmt.Sprintf(clickDownload, "/file/"+name))
	time.Sleep(7 * time.Second)
	for _, l := range s.lines() {
		t.Logf("server: %s", l)
	}
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
			t.Logf("in Downloads: %s %d bytes %.16q", f.Name(), len(data), data)
			if strings.Contains(string(data), "PERSON-BYTES") && len(data) == 4096 {
				personsFile = true
			}
			os.Remove(filepath.Join(personsDownloads(), f.Name()))
		}
	}
	for _, l := range s.lines() {
		if strings.Contains(l, "PERSON request ABORTED") {
			t.Errorf("the program's deny canceled the person's own download (started in the person's own tab): %s", l)
		}
	}
	if !personsFile {
		t.Errorf("the person's finished download is not in their Downloads folder")
	}
}

// As TestRedTeamDenyLeavesThePersonsDownload, but the
// person's file finishes a moment after the program's download began: the
// cancel comes too late, and a finished denied download's file is removed:
// the person's own file.
func TestRedTeamDenyLeavesThePersonsFinishedFile(t *testing.T) {
	t.Parallel() // a download test: its own servers and files; it waits on them beside the others
	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	srv, tok := endpoint(t)
	for _, wait := range []time.Duration{0, 250 * time.Millisecond, 350 * time.Millisecond, 450 * time.Millisecond, 600 * time.Millisecond} {
		// 0: the control, the same with no download of the program's.
		control := wait == 0
		if control {
			wait = 350 * time.Millisecond
		}
		t.Run(fmt.Sprintf("%v-control=%v", wait, control), func(t *testing.T) {
			name := fmt.Sprintf("deny-finished-%d.bin", time.Now().UnixNano())
			s, base := denyServe(t, wait, 3*time.Second)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			person, err := u.OpenTab(ctx, base+"/page?person")
			if err != nil {
				t.Fatal(err)
			}
			closeUserTab(t, person)
			b := dialRawTo(t, srv, tok)
			b.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "deny", "eventsEnabled": true})
			tid, sid := b.open(base + "/page?program")
			t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": tid}) })
			b.must(sid, "Page.enable", nil)
			b.eval(sid, "1")
			time.Sleep(300 * time.Millisecond)
			if _, err := u.Eval(ctx, person, fmt.Sprintf(clickDownload, "/file/"+name)); err != nil {
				t.Fatal(err)
			}
			time.Sleep(200 * time.Millisecond)
			if !control {
				b.eval(sid, fmt.Sprintf(clickDownload, "/file/"+name))
			}
			time.Sleep(5 * time.Second)
			for _, l := range s.lines() {
				t.Logf("server: %s", l)
			}
			var personsFile bool
			files, _ := os.ReadDir(personsDownloads())
			for _, f := range files {
				if strings.HasPrefix(f.Name(), strings.TrimSuffix(name, ".bin")) {
					data, _ := os.ReadFile(filepath.Join(personsDownloads(), f.Name()))
					t.Logf("in Downloads: %s %d bytes %.16q", f.Name(), len(data), data)
					if strings.Contains(string(data), "PERSON-BYTES") && len(data) == 4096 {
						personsFile = true
					}
					os.Remove(filepath.Join(personsDownloads(), f.Name()))
				}
			}
			sentInFull := false
			for _, l := range s.lines() {
				if strings.Contains(l, "PERSON request sent in full") {
					sentInFull = true
				}
			}
			if !personsFile {
				t.Errorf("the person's download (sent in full by the server: %v) is gone from their Downloads folder after a program's denied download of the same URL", sentInFull)
			}
		})
	}
}
