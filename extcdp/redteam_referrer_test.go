package extcdp_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// threeSites serves the same handler on 127.0.0.1 (also as localhost),
// 127.0.0.2 and 127.0.0.3: /file/<name> (an attachment, slow when
// slow=1), /go, /inner?f=<file>&now=1&away=1 (a frame's page that clicks a
// download link of f, only when framed, and with away=1 navigates itself
// away at once), /top?f=<url> (frames url), /ping (counts), else a page.
type threeSites struct {
	a, b, c, lh string
	asked       atomic.Int64
	pings       atomic.Int64
	release     atomic.Bool
}

func serveThreeSites(t *testing.T) *threeSites {
	s := &threeSites{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/file/"):
			s.asked.Add(1)
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Disposition", `attachment; filename="`+strings.TrimPrefix(r.URL.Path, "/file/")+`"`)
			w.Header().Set("Content-Length", "4096")
			body := []byte(strings.Repeat("MZ payload ", 400))[:4096]
			w.Write(body[:1024])
			w.(http.Flusher).Flush()
			time.Sleep(2 * time.Second)
			w.Write(body[1024:])
		case r.URL.Path == "/go":
			w.Header().Set("Access-Control-Allow-Origin", "*")
			fmt.Fprint(w, s.release.Load())
		case r.URL.Path == "/ping":
			s.pings.Add(1)
			fmt.Fprint(w, "<!doctype html><title>ping</title><body>ping")
		case r.URL.Path == "/inner":
			q := r.URL.Query()
			wait := `while (await (await fetch('/go')).text() !== 'true') await new Promise((r) => setTimeout(r, 50));`
			if q.Get("now") == "1" {
				wait = ""
			}
			away := ""
			if q.Get("away") == "1" {
				away = `setTimeout(() => location.replace('/page?gone=1'), 0);`
			}
			fmt.Fprintf(w, `<!doctype html><title>inner</title><body><script>
if (window.top !== window) (async () => { %s
  const a = document.createElement('a'); a.href = %q; a.download = ''; document.body.append(a); a.click(); %s
})();
</script>`, wait, q.Get("f"), away)
		case r.URL.Path == "/top":
			fmt.Fprintf(w, `<!doctype html><title>top</title><iframe src="%s"></iframe>`, r.URL.Query().Get("f"))
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

func (s *threeSites) waitAsked(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); s.asked.Load() < 1 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	if s.asked.Load() < 1 {
		t.Fatal("the file was never asked for: this run shows nothing")
	}
}

// completeIn reports the files of prefix name in the person's Downloads,
// removing them: the complete ones and all.
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

func (c *rawClient) downloadEvents() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, e := range c.events {
		if strings.HasPrefix(e.Method, "Browser.download") || strings.HasPrefix(e.Method, "Page.download") {
			out = append(out, e.Method+" "+string(e.Params))
		}
	}
	return out
}

// The person's own tab (no program drives it) shows a page of site P that
// frames a widget of site X; the widget downloads a file. A program that
// denies downloads drives a tab whose top page is of X (origin case: the
// file is of another site, so the item's referrer is X's origin alone), or
// is the very URL of the person's widget (exact case). When the extension
// looked at top pages first, it named the program's tab, and the relay
// joined the person's download to it: canceled, and told to the program
// (red team, 2 of 2 each). Now two tabs show the referrer: neither is
// named.
func TestRedTeamPersonsFrameDownloadStaysThePersons(t *testing.T) {
	for _, tc := range []string{"origin", "exact"} {
		t.Run(tc, func(t *testing.T) {
			s := serveThreeSites(t)
			name := fmt.Sprintf("rpersons-%s-%d.bin", tc, time.Now().UnixNano())
			var inner, programURL string
			if tc == "origin" {
				inner = s.c + "/inner?f=" + url.QueryEscape(s.lh+"/file/"+name)
				programURL = s.c + "/prog"
			} else {
				inner = s.c + "/inner?f=" + url.QueryEscape(s.c+"/file/"+name)
				programURL = inner
			}
			u, err := env.User(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer u.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			person, err := u.OpenTab(ctx, s.b+"/top?f="+url.QueryEscape(inner))
			if err != nil {
				t.Fatal(err)
			}
			closeUserTab(t, person)
			time.Sleep(500 * time.Millisecond)

			srv, tok := endpoint(t)
			b := dialRawTo(t, srv, tok)
			b.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "deny", "eventsEnabled": true})
			tid, sid := b.open(programURL)
			t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": tid}) })
			b.must(sid, "Page.enable", nil)
			b.eval(sid, "1")
			time.Sleep(500 * time.Millisecond)

			s.release.Store(true)
			s.waitAsked(t)
			complete, all := landedWhole(name, 8*time.Second)
			for _, e := range b.downloadEvents() {
				t.Logf("program heard %s", e)
			}
			if len(complete) == 0 {
				t.Errorf("the person's own download (a frame of their own tab) did not complete: files %v", all)
			}
			if ev := b.downloadEvents(); len(ev) > 0 {
				t.Errorf("the program was told of the person's download: %d events", len(ev))
			}
		})
	}
}

// A hostile page in the program's tab (which denies downloads) frames a
// page of a site X the person has open in a tab of their own; the frame
// downloads a file of another site (referrer: X's origin alone), or of
// its own (referrer: the frame's URL, which the person's tab shows). The
// relay gave the item to no tab, as another tab shows the origin or page,
// though the program's frame had told of the download: it escaped the deny
// (red team, 2 of 2 each). The frame that told of it now counts.
func TestRedTeamHostileFrameDownloadBesideThePersonsTab(t *testing.T) {
	for _, tc := range []string{"origin", "exact"} {
		t.Run(tc, func(t *testing.T) {
			s := serveThreeSites(t)
			name := fmt.Sprintf("rhostile-%s-%d.bin", tc, time.Now().UnixNano())
			var inner, personURL string
			if tc == "origin" {
				inner = s.c + "/inner?f=" + url.QueryEscape(s.lh+"/file/"+name)
				personURL = s.c + "/mine"
			} else {
				inner = s.c + "/inner?f=" + url.QueryEscape(s.c+"/file/"+name)
				personURL = inner
			}
			u, err := env.User(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer u.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			person, err := u.OpenTab(ctx, personURL)
			if err != nil {
				t.Fatal(err)
			}
			closeUserTab(t, person)
			time.Sleep(500 * time.Millisecond)

			srv, tok := endpoint(t)
			b := dialRawTo(t, srv, tok)
			b.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "deny", "eventsEnabled": true})
			tid, sid := b.open("about:blank")
			t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": tid}) })
			b.must(sid, "Page.enable", nil)
			b.must(sid, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
			b.navigate(sid, s.b+"/top?f="+url.QueryEscape(inner))
			time.Sleep(1500 * time.Millisecond)
			s.release.Store(true)
			s.waitAsked(t)
			for deadline := time.Now().Add(8 * time.Second); !b.hasEvent("Browser.downloadProgress", `"canceled"`) && time.Now().Before(deadline); {
				time.Sleep(100 * time.Millisecond)
			}
			heard := b.hasEvent("Browser.downloadProgress", `"canceled"`)
			complete, all := landedWhole(name, 4*time.Second)
			for _, e := range b.downloadEvents() {
				t.Logf("program heard %s", e)
			}
			if len(complete) > 0 {
				t.Errorf("the hostile frame's download landed in the person's Downloads folder despite the program's deny: %v (program heard canceled: %v)", complete, heard)
			} else if !heard {
				t.Errorf("the program never heard its frame's download canceled (files: %v)", all)
			}
		})
	}
}

// A frame nested in another site's frame, of a third site, downloads as
// soon as it loads, with referrerpolicy no-referrer: the extension has no
// referrer to name a tab by, and the relay's auto-attach in the middle
// frame may land after the nested frame ran.
func TestRedTeamNestedNoReferrerAtOnce(t *testing.T) {
	s := serveFrameSites(t)
	name := fmt.Sprintf("rtnest-%d.bin", time.Now().UnixNano())
	page := s.a + "/top?f=" + url.QueryEscape(s.c+"/mid?f="+url.QueryEscape(s.lh+"/inner?nr=1&now=1&n="+name))
	srv, tok := endpoint(t)
	b := dialRawTo(t, srv, tok)
	b.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "deny", "eventsEnabled": true})
	tid, sid := b.open("about:blank")
	t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": tid}) })
	b.must(sid, "Page.enable", nil)
	b.must(sid, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
	b.navigate(sid, page)
	s.fire(t)
	for deadline := time.Now().Add(8 * time.Second); !b.hasEvent("Browser.downloadProgress", `"canceled"`) && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	heard := b.hasEvent("Browser.downloadProgress", `"canceled"`)
	if got := landedNamed(name, 3*time.Second); len(got) > 0 {
		t.Errorf("the nested frame's download landed in the person's Downloads folder despite the program's deny: %v (program heard canceled: %v)", got, heard)
	} else if !heard {
		t.Errorf("the program never heard its nested frame's download canceled (nothing landed)")
	}
}
