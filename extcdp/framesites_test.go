package extcdp_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// frameSites serves the pages of the frame and download tests on four
// sites: 127.0.0.1, 127.0.0.2, 127.0.0.3 and localhost (127.0.0.1's port).
//
//	/top?f=URL, /mid?f=URL  a page that frames URL
//	/opener?f=URL           a page whose link #x opens URL in a new tab
//	/inner?f=URL or ?n=NAME a page that, framed, clicks a download link of
//	                        URL (or /file/NAME) once /go says so; now=1: at
//	                        once; nr=1: with no referrer; away=1: then
//	                        navigates itself away
//	/file/NAME              an attachment of 4096 bytes, counted in asked;
//	                        with slow set, its last 3 KiB 2 s later
//	/go                     release, for /inner
//	/ping                   a page, counted in pings
//	anything else           an empty page
type frameSites struct {
	a, b, c, lh   string
	asked, pings  atomic.Int64
	release, slow atomic.Bool
}

func serveFrameSites(t *testing.T) *frameSites {
	s := &frameSites{}
	body := []byte(strings.Repeat("MZ payload ", 400))[:4096]
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		switch {
		case strings.HasPrefix(r.URL.Path, "/file/"):
			s.asked.Add(1)
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Disposition", `attachment; filename="`+strings.TrimPrefix(r.URL.Path, "/file/")+`"`)
			w.Header().Set("Content-Length", "4096")
			if s.slow.Load() {
				w.Write(body[:1024])
				w.(http.Flusher).Flush()
				time.Sleep(2 * time.Second)
				w.Write(body[1024:])
				return
			}
			w.Write(body)
		case r.URL.Path == "/go":
			w.Header().Set("Access-Control-Allow-Origin", "*")
			fmt.Fprint(w, s.release.Load())
		case r.URL.Path == "/ping":
			s.pings.Add(1)
			fmt.Fprint(w, "<!doctype html><title>ping</title><body>ping")
		case r.URL.Path == "/inner":
			file := q.Get("f")
			if n := q.Get("n"); n != "" {
				file = "/file/" + n
			}
			wait := `while (await (await fetch('/go')).text() !== 'true') await new Promise((r) => setTimeout(r, 50));`
			if q.Get("now") == "1" {
				wait = ""
			}
			policy, away := "", ""
			if q.Get("nr") == "1" {
				policy = "a.referrerPolicy = 'no-referrer';"
			}
			if q.Get("away") == "1" {
				away = `setTimeout(() => location.replace('/page?gone=1'), 0);`
			}
			fmt.Fprintf(w, `<!doctype html><title>inner</title><body><script>
if (window.top !== window) (async () => { %s
  const a = document.createElement('a'); a.href = %q; a.download = ''; %s document.body.append(a); a.click(); %s
})();
</script>`, wait, file, policy, away)
		case r.URL.Path == "/top" || r.URL.Path == "/mid":
			fmt.Fprintf(w, `<!doctype html><title>%s</title><iframe src="%s"></iframe>`, r.URL.Path, q.Get("f"))
		case r.URL.Path == "/opener":
			fmt.Fprintf(w, `<!doctype html><title>opener</title><a id="x" href="%s" target="_blank">open</a>`, q.Get("f"))
		default:
			fmt.Fprint(w, `<!doctype html><title>page</title><body>`)
		}
	})
	a := loopbackServer(t, "127.0.0.1", h)
	b := loopbackServer(t, "127.0.0.2", h)
	c := loopbackServer(t, "127.0.0.3", h)
	s.a, s.b, s.c = a.URL, b.URL, c.URL
	s.lh = "http://localhost:" + a.URL[strings.LastIndex(a.URL, ":")+1:]
	return s
}

// waitAsked fails the test when no file was asked for within 15 s: the
// run would show nothing.
func (s *frameSites) waitAsked(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); s.asked.Load() < 1 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	if s.asked.Load() < 1 {
		t.Fatal("no frame asked for its file: this run shows nothing")
	}
}

// fire releases the frames waiting on /go and waits for a file asked for.
func (s *frameSites) fire(t *testing.T) {
	t.Helper()
	s.release.Store(true)
	s.waitAsked(t)
}

// landedNamed waits up to d for files named like name in the person's
// Downloads folder, removes what it finds and returns their names.
func landedNamed(name string, d time.Duration) []string {
	dir := personsDownloads()
	prefix := strings.TrimSuffix(name, ".bin")
	var found []string
	for deadline := time.Now().Add(d); len(found) == 0 && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		files, _ := os.ReadDir(dir)
		for _, f := range files {
			if strings.HasPrefix(f.Name(), prefix) {
				found = append(found, f.Name())
				os.Remove(filepath.Join(dir, f.Name()))
			}
		}
	}
	return found
}

// landedWhole waits up to d for a complete file named like name in the
// person's Downloads folder, removes what it finds and returns the
// complete files and all.
func landedWhole(name string, d time.Duration) (complete, all []string) {
	dir := personsDownloads()
	prefix := strings.TrimSuffix(name, ".bin")
	deadline := time.Now().Add(d)
	for {
		complete, all = nil, nil
		ents, _ := os.ReadDir(dir)
		for _, f := range ents {
			if strings.HasPrefix(f.Name(), prefix) {
				all = append(all, f.Name())
				if fi, err := f.Info(); err == nil && fi.Size() == 4096 && !strings.HasSuffix(f.Name(), ".crdownload") {
					complete = append(complete, f.Name())
				}
			}
		}
		if len(complete) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, f := range all {
		os.Remove(filepath.Join(dir, f))
	}
	return complete, all
}

// personsTab opens url in a tab of the person's, closed when the test
// ends, and gives the extension a moment to report it.
func personsTab(t *testing.T, url string) string {
	t.Helper()
	id := userTab(t, url)
	closeUserTab(t, id)
	time.Sleep(500 * time.Millisecond)
	return id
}

// denyingProgram is a program on the endpoint that denies downloads and
// hears of them (Browser.setDownloadBehavior deny, eventsEnabled).
func denyingProgram(t *testing.T) *rawClient {
	t.Helper()
	srv, tok := endpoint(t)
	b := dialRawTo(t, srv, tok)
	b.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "deny", "eventsEnabled": true})
	return b
}
