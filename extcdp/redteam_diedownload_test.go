package extcdp_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// slowDownloads serves /page (HTML) and /file/<name>?hdr=<ms>&body=<ms>: an
// attachment whose headers come after hdr ms and whose body ends body ms
// after its first KiB. It notes each request's fate.
type slowDownloads struct {
	mu  sync.Mutex
	log []string
}

func (s *slowDownloads) note(f string, a ...any) {
	s.mu.Lock()
	s.log = append(s.log, fmt.Sprintf("%s "+f, append([]any{time.Now().Format("15:04:05.000")}, a...)...))
	s.mu.Unlock()
}

func (s *slowDownloads) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

func slowDownloadServer(t *testing.T) (*slowDownloads, string) {
	return slowDownloadServerAt(t, "127.0.0.1")
}

// slowDownloadServerAt is slowDownloadServer on another loopback address.
func slowDownloadServerAt(t *testing.T, ip string) (*slowDownloads, string) {
	s := &slowDownloads{}
	srv := loopbackServer(t, ip, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/file/") {
			fmt.Fprint(w, "<!doctype html><title>dl</title><body>page</body>")
			return
		}
		name := strings.TrimPrefix(r.URL.Path, "/file/")
		hdr, _ := strconv.Atoi(r.URL.Query().Get("hdr"))
		body, _ := strconv.Atoi(r.URL.Query().Get("body"))
		s.note("request %s referer=%q", name, r.Referer())
		select {
		case <-time.After(time.Duration(hdr) * time.Millisecond):
		case <-r.Context().Done():
			s.note("%s ABORTED before headers", name)
			return
		}
		const size = 64 << 10
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
		w.Header().Set("Content-Length", strconv.Itoa(size))
		data := []byte(strings.Repeat("X", size))
		w.Write(data[:1024])
		w.(http.Flusher).Flush()
		s.note("%s headers and first KiB sent", name)
		select {
		case <-time.After(time.Duration(body) * time.Millisecond):
		case <-r.Context().Done():
			s.note("%s ABORTED mid-body (canceled by the browser)", name)
			return
		}
		_, err := w.Write(data[1024:])
		w.(http.Flusher).Flush()
		s.note("%s sent in full (err %v)", name, err)
	}))
	return s, srv.URL
}

// inPersonsDownloads lists (and removes) the files of the person's
// Downloads folder named like stem, .crdownload included.
func inPersonsDownloads(stem string) []string {
	var found []string
	files, _ := os.ReadDir(personsDownloads())
	for _, f := range files {
		if strings.HasPrefix(f.Name(), stem) {
			info, _ := f.Info()
			size := int64(-1)
			if info != nil {
				size = info.Size()
			}
			found = append(found, fmt.Sprintf("%s (%d bytes)", f.Name(), size))
			os.Remove(filepath.Join(personsDownloads(), f.Name()))
		}
	}
	return found
}

// finishedIn reports whether dir holds a finished file named like stem.
func finishedIn(dir, stem string) bool {
	files, _ := os.ReadDir(dir)
	for _, f := range files {
		if strings.HasPrefix(f.Name(), stem) && !strings.HasSuffix(f.Name(), ".crdownload") {
			return true
		}
	}
	return false
}

func unconfirmed() map[string]bool {
	m := map[string]bool{}
	files, _ := os.ReadDir(personsDownloads())
	for _, f := range files {
		if strings.HasSuffix(f.Name(), ".crdownload") {
			m[f.Name()] = true
		}
	}
	return m
}

func dirFiles(dir string) []string {
	var names []string
	files, _ := os.ReadDir(dir)
	for _, f := range files {
		names = append(names, f.Name())
	}
	return names
}

// A client that set allow/allowAndName into its own directory, or deny,
// starts a slow download in its tab (or in a popup its tab opened) and
// dies (its WebSocket closed at once) before the download ends. The file
// must not land in the person's Downloads folder, which no one chose, nor
// stay there as a .crdownload. "stay" is the control: the client lives
// and gets the file in its directory.
// session-allow-closes-tab is a chromedp-style session behavior whose tab
// is closed mid-download, the client still connected. Each left the whole
// file in the person's Downloads folder (3 of 3 runs): the relay read the
// drivers' behavior when the download ended, and the client, or its
// session, was gone by then; it keeps the behavior of the download's
// begin now, as Chrome fixes a download's path then.
func TestRedTeamDiesMidDownload(t *testing.T) {
	t.Parallel() // a download test: its own servers and files; it waits on them beside the others
	for _, tc := range []struct {
		name      string
		behavior  string
		popup     bool
		stay      bool
		hdr, body int
		// dieAt: "begun" waits for Browser.downloadWillBegin before
		// dying; "click" dies as soon as the click returned.
		dieAt string
		// session: the behavior is set on the tab's session (chromedp's
		// way); closeTab: the client closes its tab instead of dying.
		session, closeTab bool
		// selfClose: the page closes its own tab (window.close) right
		// after its click.
		selfClose bool
		// how the page clicks: "" on its own page; "replace" then
		// changes its URL (history.replaceState) before it closes;
		// "frame" clicks in a frame of its own.
		how string
	}{
		{"allow-stay-control", "allow", false, true, 0, 1500, "begun", false, false, false, ""},
		{"allow-dies", "allow", false, false, 0, 1500, "begun", false, false, false, ""},
		{"allowAndName-dies", "allowAndName", false, false, 0, 1500, "begun", false, false, false, ""},
		{"popup-allow-dies", "allow", true, false, 0, 1500, "begun", false, false, false, ""},
		{"session-allow-dies", "allow", false, false, 0, 1500, "begun", true, false, false, ""},
		{"session-allow-closes-tab", "allow", false, true, 0, 1500, "begun", true, true, false, ""},
		// Before Chrome has begun the download (its server is slow to
		// send headers), the tab is closed: the download is of no tab
		// when it begins. Each landed in the person's Downloads folder
		// (2 of 2 runs, 2026-11-30): only a download joined to a tab
		// heard a client's behavior.
		{"allow-dies-before-begin", "allow", false, false, 1500, 300, "click", false, false, false, ""},
		{"deny-dies-before-begin", "deny", false, false, 1500, 300, "click", false, false, false, ""},
		{"session-allow-dies-before-begin", "allow", false, false, 1500, 300, "click", true, false, false, ""},
		{"allow-closes-tab-before-begin", "allow", false, true, 1500, 300, "click", false, true, false, ""},
		{"deny-page-closes-itself-before-begin", "deny", false, true, 1500, 300, "click", false, false, true, ""},
		// A hostile page escaped the deny of the above: it changed its URL
		// before closing, so the download's referrer was no longer the
		// page the closed tab showed; or its click came from a frame,
		// whose URL the tab never showed (1 of 1 each, 2026-11-30).
		{"deny-page-replaces-url-closes-itself-before-begin", "deny", false, true, 1500, 300, "click", false, false, true, "replace"},
		{"deny-frame-click-closes-itself-before-begin", "deny", false, true, 1500, 300, "click", false, false, true, "frame"},
		// Or it sent its origin alone as the referrer, or its server sent
		// the headers after the 10 s the relay kept a closed tab.
		{"deny-origin-referrer-closes-itself-before-begin", "deny", false, true, 1500, 300, "click", false, false, true, "origin"},
		{"deny-page-closes-itself-headers-after-12s", "deny", false, true, 12000, 300, "click", false, false, true, ""},
		// Or it sent no referrer at all (rel=noreferrer). Held when
		// written (2026-12-01): Chrome's download item still names the page.
		{"deny-no-referrer-closes-itself-before-begin", "deny", false, true, 1500, 300, "click", false, false, true, "noreferrer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stem := fmt.Sprintf("rt-die-%s-%d", tc.name, time.Now().UnixNano())
			name := stem + ".bin"
			ip := "127.0.0.1"
			if tc.how == "noreferrer" {
				// A download with no referrer goes by its origin, and any
				// person's tab on it keeps it theirs: on 127.0.0.1, a port
				// of another test's person's page of the last ten minutes,
				// used again, would (a guess at the one failure under CI's
				// load, which passed alone). No other test uses 127.0.0.9.
				ip = "127.0.0.9"
			}
			s, base := slowDownloadServerAt(t, ip)
			dir := t.TempDir()
			srv, tok := endpoint(t)
			b := dialRawTo(t, srv, tok)
			params := map[string]any{"behavior": tc.behavior, "eventsEnabled": true}
			if tc.behavior != "deny" {
				params["downloadPath"] = dir
			}
			if !tc.session {
				b.must("", "Browser.setDownloadBehavior", params)
			}
			tid, sid := b.open(base + "/page")
			if tc.session {
				b.must(sid, "Browser.setDownloadBehavior", params)
			}
			t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": tid}) })
			b.must(sid, "Page.enable", nil)
			b.eval(sid, "document.readyState === 'complete' || new Promise(r => onload = r)")
			before := unconfirmed()
			url := fmt.Sprintf("/file/%s?hdr=%d&body=%d", name, tc.hdr, tc.body)
			switch {
			case tc.popup:
				b.eval(sid, fmt.Sprintf("window.open(%q), 1", url))
			case tc.how == "replace":
				b.eval(sid, fmt.Sprintf(clickDownload, url))
				b.eval(sid, "history.replaceState(null, '', '/elsewhere?x'), 1")
			case tc.how == "origin":
				b.eval(sid, strings.Replace(fmt.Sprintf(clickDownload, url), "a.download = '';", "a.download = ''; a.referrerPolicy = 'origin';", 1))
			case tc.how == "noreferrer":
				b.eval(sid, strings.Replace(fmt.Sprintf(clickDownload, url), "a.download = '';", "a.download = ''; a.referrerPolicy = 'no-referrer';", 1))
			case tc.how == "frame":
				b.eval(sid, `new Promise(r => { const f = document.createElement('iframe'); f.src = '/inner-frame'; f.onload = r; document.body.appendChild(f) }).then(() => 1)`)
				b.eval(sid, fmt.Sprintf("document.querySelector('iframe').contentWindow.eval(%q)", fmt.Sprintf(clickDownload, url)))
			default:
				b.eval(sid, fmt.Sprintf(clickDownload, url))
			}
			if tc.selfClose {
				b.eval(sid, "setTimeout(() => window.close(), 50), 1")
			}
			if tc.dieAt == "begun" {
				for deadline := time.Now().Add(10 * time.Second); !b.hasEvent("Browser.downloadWillBegin", stem) && time.Now().Before(deadline); {
					time.Sleep(20 * time.Millisecond)
				}
				if !b.hasEvent("Browser.downloadWillBegin", stem) {
					t.Logf("no Browser.downloadWillBegin heard before dying")
				}
				time.Sleep(300 * time.Millisecond) // chrome.downloads reports it in progress
			}
			if tc.closeTab {
				b.must("", "Target.closeTarget", map[string]any{"targetId": tid})
				t.Logf("client closed its tab at %s", time.Now().Format("15:04:05.000"))
			}
			if !tc.stay {
				b.ws.CloseNow()
				t.Logf("client died at %s", time.Now().Format("15:04:05.000"))
			}
			// Until the file is in one place or the other, and a moment
			// more for the move.
			for deadline := time.Now().Add(time.Duration(tc.hdr+tc.body)*time.Millisecond + 4*time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				if finishedIn(personsDownloads(), stem) || finishedIn(dir, "") {
					break
				}
			}
			time.Sleep(500 * time.Millisecond)
			for _, l := range s.lines() {
				t.Logf("server: %s", l)
			}
			landed := inPersonsDownloads(stem)
			var crd []string
			for n := range unconfirmed() {
				if !before[n] {
					crd = append(crd, n)
				}
			}
			t.Logf("person's Downloads: %q; new .crdownload there: %q; client's directory: %q", landed, crd, dirFiles(dir))
			if len(landed) > 0 {
				t.Errorf("%s: the download of a client that died or closed its tab landed in the person's Downloads folder: %q", tc.name, landed)
			}
			if tc.stay && tc.behavior != "deny" && len(dirFiles(dir)) == 0 {
				t.Errorf("%s: the client (still connected) has nothing in its directory", tc.name)
			}
		})
	}
}

// TestRedTeamPersonsNoReferrerDownloadStaysThePersons: the controls of the
// no-referrer case above. A program that denies downloads showed a page of
// a site and closed its tab; then the person downloads from that site with
// no referrer at all: typed in the address bar (a tab opened on the file's
// URL), or from their own page of the site with referrerPolicy
// no-referrer. The program's closed tab showed the origin, but the
// download is the person's: it lands in their Downloads folder.
func TestRedTeamPersonsNoReferrerDownloadStaysThePersons(t *testing.T) {
	t.Parallel() // a download test: its own servers and files; it waits on them beside the others
	for _, how := range []string{"typed", "own-page"} {
		t.Run(how, func(t *testing.T) {
			stem := fmt.Sprintf("rt-nr-person-%s-%d", how, time.Now().UnixNano())
			s, base := slowDownloadServer(t)
			srv, tok := endpoint(t)
			b := dialRawTo(t, srv, tok)
			b.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "deny", "eventsEnabled": true})
			tid, sid := b.open(base + "/page")
			b.eval(sid, "document.readyState === 'complete' || new Promise(r => onload = r)")
			b.must("", "Target.closeTarget", map[string]any{"targetId": tid})
			time.Sleep(300 * time.Millisecond)
			u, err := env.User(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer u.Close()
			file := fmt.Sprintf("/file/%s.bin?hdr=1500&body=300", stem)
			switch how {
			case "typed":
				id, err := u.OpenTab(t.Context(), base+file)
				if err != nil {
					t.Fatal(err)
				}
				closeUserTab(t, id)
			case "own-page":
				id, err := u.OpenTab(t.Context(), base+"/page")
				if err != nil {
					t.Fatal(err)
				}
				closeUserTab(t, id)
				click := strings.Replace(fmt.Sprintf(clickDownload, file), "a.download = '';", "a.download = ''; a.referrerPolicy = 'no-referrer';", 1)
				if _, err := u.Eval(t.Context(), id, `new Promise(r => document.readyState === 'complete' ? r() : onload = r)`); err != nil {
					t.Fatal(err)
				}
				// The person's click: with a user gesture, as Chrome wants
				// of a download.
				res, err := u.Call(t.Context(), "Target.attachToTarget", map[string]any{"targetId": id, "flatten": true})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := u.CallSession(t.Context(), field(res, "sessionId"), "Runtime.evaluate", map[string]any{"expression": click, "userGesture": true}); err != nil {
					t.Fatal(err)
				}
			}
			buriedWaitFile(personsDownloads(), stem, 8*time.Second)
			for _, l := range s.lines() {
				t.Logf("server: %s", l)
			}
			if landed := inPersonsDownloads(stem); len(landed) == 0 {
				t.Errorf("%s: the person's download with no referrer did not land in their Downloads folder (a program's closed tab that denies had shown the site)", how)
			}
		})
	}
}
