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

// frameDownloadSite serves /page (an <iframe> of /inner at frameHost, or a
// link to /popup that holds that frame), /inner, whose page downloads
// /file/<name> once /go says so, and the file, counting its requests.
type frameDownloadSite struct {
	url     string
	name    string
	asked   atomic.Int64
	release atomic.Bool
}

func serveFrameDownload(t *testing.T, name string, crossSite bool) *frameDownloadSite {
	t.Helper()
	site := &frameDownloadSite{name: name}
	var frameOrigin string
	srv := loopbackServer(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/file/"):
			site.asked.Add(1)
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Disposition", `attachment; filename="`+strings.TrimPrefix(r.URL.Path, "/file/")+`"`)
			fmt.Fprint(w, "MZ payload")
		case r.URL.Path == "/go":
			w.Header().Set("Access-Control-Allow-Origin", "*")
			fmt.Fprint(w, site.release.Load())
		case r.URL.Path == "/inner":
			fmt.Fprintf(w, `<!doctype html><title>inner</title><script>
(async () => {
  while (await (await fetch('/go')).text() !== 'true') await new Promise((r) => setTimeout(r, 50));
  const a = document.createElement('a'); a.href = '/file/%s'; a.download = ''; document.body.append(a); a.click();
})();
</script>`, name)
		case r.URL.Path == "/framed":
			fmt.Fprintf(w, `<!doctype html><title>framed</title><iframe src="%s/inner"></iframe>`, frameOrigin)
		default:
			fmt.Fprint(w, `<!doctype html><title>page</title><a id="x" href="/framed" target="_blank">open</a>`)
		}
	}))
	site.url = srv.URL
	frameOrigin = srv.URL
	if crossSite {
		// localhost is another site than 127.0.0.1: the frame runs in a
		// process of its own, a target with a session of its own.
		frameOrigin = "http://localhost:" + srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	}
	return site
}

// landed waits up to d for the site's file in dir, removes what it finds
// and returns its names.
func (s *frameDownloadSite) landed(dir string, d time.Duration) []string {
	var found []string
	for deadline := time.Now().Add(d); len(found) == 0 && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		files, _ := os.ReadDir(dir)
		for _, f := range files {
			if strings.HasPrefix(f.Name(), strings.TrimSuffix(s.name, ".bin")) {
				found = append(found, f.Name())
				os.Remove(filepath.Join(dir, f.Name()))
			}
		}
	}
	return found
}

// fired releases the frame's download and waits until it asked for its
// file.
func (s *frameDownloadSite) fire(t *testing.T) {
	t.Helper()
	s.release.Store(true)
	for deadline := time.Now().Add(15 * time.Second); s.asked.Load() < 1 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	if s.asked.Load() < 1 {
		t.Fatal("the frame never asked for its file: this run shows nothing")
	}
}

// A program that denies downloads, or names its directory, drives a tab
// whose page frames another page (of its own site, or of another one in a
// process of its own), or whose page opens a popup that does; the frame's
// page downloads. Chrome tells of it on the tab's session or the frame's
// own, and chrome.downloads names the frame's page as the referrer, not
// the tab's: the relay took the item for another's download and the file
// landed in the person's Downloads folder despite the deny, or never
// reached the program's directory (each case 1 of 1; in a frame of
// another site also when the program turned Page on there). A program that
// auto-attaches (chromedp, Playwright and Puppeteer do) but does not turn
// Page on in the frame (chromedp does not) never heard of the download.
func TestRedTeamFrameDownloadsHeedTheBehavior(t *testing.T) {
	for _, tc := range []struct {
		name             string
		crossSite, popup bool
		dir              bool
		framePage        bool // the program turns Page on in the frame, as Playwright does; chromedp does not
		atOnce           bool // the frame downloads as soon as it runs
	}{
		{"own-tab/same-site", false, false, false, false, false},
		{"own-tab/cross-site", true, false, false, false, false},
		{"own-tab/cross-site/page-on", true, false, false, true, false},
		{"own-tab/cross-site/allowAndName", true, false, true, false, false},
		{"popup/same-site", false, true, false, false, false},
		{"popup/cross-site", true, true, false, false, false},
		{"own-tab/cross-site/at-once", true, false, false, false, true},
		{"popup/cross-site/at-once", true, true, false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			site := serveFrameDownload(t, fmt.Sprintf("framedl-%d.bin", time.Now().UnixNano()), tc.crossSite)
			s, tok := endpoint(t)
			b := dialRawTo(t, s, tok)
			dir := t.TempDir()
			if tc.dir {
				b.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "allowAndName", "downloadPath": dir, "eventsEnabled": true})
			} else {
				b.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "deny", "eventsEnabled": true})
			}
			tid, sid := b.open("about:blank")
			t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": tid}) })
			b.must(sid, "Page.enable", nil)
			b.must(sid, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
			site.release.Store(tc.atOnce)
			if tc.popup && tc.atOnce {
				b.navigate(sid, site.url+"/page")
				b.eval(sid, "document.getElementById('x').click(), 1")
				t.Cleanup(func() {
					if pid, _ := waitPopupAttached(b, tid, true, time.Second); pid != "" {
						b.call("", "Target.closeTarget", map[string]any{"targetId": pid})
					}
				})
			} else if tc.popup {
				b.navigate(sid, site.url+"/page")
				b.eval(sid, "document.getElementById('x').click(), 1")
				pid, ok := waitPopupAttached(b, tid, true, 10*time.Second)
				if pid != "" {
					t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": pid}) })
				}
				if !ok {
					t.Fatal("the relay never watched the popup: this run shows nothing")
				}
				time.Sleep(time.Second) // the frame attached, its Page on
			} else {
				b.navigate(sid, site.url+"/framed")
				if tc.crossSite && !tc.atOnce {
					child := ""
					for deadline := time.Now().Add(10 * time.Second); child == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
						b.mu.Lock()
						for _, e := range b.events {
							if e.Method == "Target.attachedToTarget" && e.SessionID == sid && strings.Contains(string(e.Params), `"iframe"`) {
								child = field(e.Params, "sessionId")
							}
						}
						b.mu.Unlock()
					}
					if child == "" {
						t.Fatal("the frame of another site never attached: this run shows nothing")
					}
					if tc.framePage {
						b.must(child, "Page.enable", nil)
					}
				}
			}
			site.fire(t)
			if tc.dir {
				if got := site.landed(personsDownloads(), 5*time.Second); len(got) > 0 {
					t.Errorf("the frame's download landed in the person's Downloads folder, not the program's: %v", got)
				}
				files, _ := os.ReadDir(dir)
				if len(files) != 1 {
					t.Errorf("the program's directory holds %d files, want the frame's download", len(files))
				}
				return
			}
			for deadline := time.Now().Add(10 * time.Second); !b.hasEvent("Browser.downloadProgress", `"canceled"`) && time.Now().Before(deadline); {
				time.Sleep(100 * time.Millisecond)
			}
			if !b.hasEvent("Browser.downloadProgress", `"canceled"`) {
				t.Errorf("the program never heard its frame's download canceled")
			}
			if got := site.landed(personsDownloads(), 2*time.Second); len(got) > 0 {
				t.Errorf("the frame's download landed in the person's Downloads folder despite the program's deny: %v", got)
			}
		})
	}
}

// A program attaches to a popup the relay watches for its downloads, whose
// page frames another site, and turns auto-attach on: Chrome tells of a
// tab's frames once per attachment, to the relay's watch, and the program
// heard of no frame (1 of 1).
func TestAutoAttachTellsOfTheFramesAlreadyThere(t *testing.T) {
	site := serveFrameDownload(t, "never.bin", true)
	s, tok := endpoint(t)
	b := dialRawTo(t, s, tok)
	b.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "deny"})
	tid, sid := b.open(site.url + "/page")
	t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": tid}) })
	b.eval(sid, "document.getElementById('x').click(), 1")
	pid, ok := waitPopupAttached(b, tid, true, 10*time.Second)
	if pid != "" {
		t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": pid}) })
	}
	if !ok {
		t.Fatal("the relay never watched the popup: this run shows nothing")
	}
	time.Sleep(time.Second)
	psid := field(b.must("", "Target.attachToTarget", map[string]any{"targetId": pid, "flatten": true}), "sessionId")
	for range 2 { // a second time tells of nothing new
		b.must(psid, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
	}
	time.Sleep(500 * time.Millisecond)
	n, child := 0, ""
	b.mu.Lock()
	for _, e := range b.events {
		if e.Method == "Target.attachedToTarget" && e.SessionID == psid && strings.Contains(string(e.Params), `"iframe"`) {
			n++
			child = field(e.Params, "sessionId")
		}
	}
	b.mu.Unlock()
	if n != 1 {
		t.Fatalf("the program heard %d attachedToTarget of the popup's frame, want 1", n)
	}
	if got := b.eval(child, "location.pathname"); got != "/inner" {
		t.Errorf("the frame's session reads %q, want /inner", got)
	}
}
