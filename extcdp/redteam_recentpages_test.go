package extcdp_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// recentServe serves /page (HTML), /heavy?n=&k= (a page with n iframes, each
// from a frame server of its own port, so of its own origin, unique by k),
// /frame, /selfclose (closes itself after ms), and /file/<name>?hdr=<ms>.
func recentServe(t *testing.T, s *buriedSite, frames []string) string {
	srv := loopbackServer(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/heavy":
			n, _ := strconv.Atoi(r.URL.Query().Get("n"))
			k := r.URL.Query().Get("k")
			var b strings.Builder
			b.WriteString("<!doctype html><title>heavy</title><body>")
			for i := 0; i < n && len(frames) > 0; i++ {
				fmt.Fprintf(&b, `<iframe src="%s/frame?k=%s&i=%d" width=10 height=10></iframe>`, frames[i%len(frames)], k, i)
			}
			w.Write([]byte(b.String()))
			return
		case r.URL.Path == "/selfclose":
			ms := r.URL.Query().Get("ms")
			fmt.Fprintf(w, "<!doctype html><title>sc</title><body>twin<script>fetch('/file/vis-' + document.visibilityState); setTimeout(() => window.close(), %s)</script>", ms)
			return
		case !strings.HasPrefix(r.URL.Path, "/file/"):
			fmt.Fprint(w, "<!doctype html><title>dl</title><body>page</body>")
			return
		}
		name := strings.TrimPrefix(r.URL.Path, "/file/")
		hdr, _ := strconv.Atoi(r.URL.Query().Get("hdr"))
		s.note("request %s (referer %q)", name, r.Referer())
		select {
		case <-time.After(time.Duration(hdr) * time.Millisecond):
		case <-r.Context().Done():
			s.note("%s ABORTED before headers", name)
			return
		}
		const size = 8 << 10
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
		w.Header().Set("Content-Length", strconv.Itoa(size))
		w.Write([]byte(strings.Repeat("X", 1024)))
		w.(http.Flusher).Flush()
		select {
		case <-time.After(300 * time.Millisecond):
		case <-r.Context().Done():
			s.note("%s ABORTED mid-body (canceled by the browser)", name)
			return
		}
		_, err := w.Write([]byte(strings.Repeat("X", size-1024)))
		s.note("%s sent in full (err %v)", name, err)
	}))
	return srv.URL
}

func recentFrameServers(t *testing.T, n int) []string {
	var out []string
	for range n {
		srv := loopbackServer(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, "<!doctype html><body>f</body>")
		}))
		out = append(out, srv.URL)
	}
	return out
}

// (b) A hostile page in a program's tab that denies downloads makes a
// second tab show its page too (a popup of the same URL), clicks a
// download on a slow server and closes both: RecentTabIDs names two tabs,
// closedTabOf gives up ("only when one tab showed it"), and the file
// lands in the person's Downloads folder.
// Landed 1 of 1 (red team on the first version, stop 42); closedTabOf now
// takes the strictest behavior when every tab named is a program's.
func TestRedTeamTwinEscapesDeny(t *testing.T) {
	t.Parallel() // a download test: its own servers and files; it waits on them beside the others
	for _, tc := range []struct {
		name string
		twin string // "close": the opener closes the twin; "away": the twin navigates away and stays; "selfclose": a noopener twin that stays open on the page; "" control
	}{
		{"control-no-twin", ""},
		{"twin-popup-closed", "close"},
		{"twin-popup-navigates-away", "away"},
		{"twin-noopener-selfcloses", "selfclose"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &buriedSite{}
			base := recentServe(t, s, nil)
			stem := fmt.Sprintf("rt-twin-%s-%d", tc.name, time.Now().UnixNano())
			srv, tok := endpoint(t)
			b := dialRawTo(t, srv, tok)
			b.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "deny", "eventsEnabled": true})
			tid, sid := b.open(base + "/page?hostile")
			t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": tid}) })
			b.eval(sid, "document.readyState === 'complete' || new Promise(r => onload = r)")
			switch tc.twin {
			case "close", "away":
				// Under CI's load the twin was once not there to navigate:
				// say what it was, and open it once more.
				twin := `(async () => { window.twin = window.open(location.href, '_blank');
					for (let i = 0; i < 600; i++) { try { if (twin.location.href === location.href && twin.document.readyState === 'complete') return 'ok' } catch (e) {} await new Promise(r => setTimeout(r, 25)) }
					return !twin ? 'window.open gave null' : twin.closed ? 'closed' : 'not loaded' })()`
				if got := b.eval(sid, twin); got != "ok" {
					t.Logf("the twin: %s; once more", got)
					if got := b.eval(sid, twin); got != "ok" {
						t.Fatalf("the twin: %s", got)
					}
				}
			case "selfclose":
				// A noopener twin the opener cannot close: it stays open on
				// the page (the control of a twin still showing it).
				b.eval(sid, `window.open(location.href, '_blank', 'noopener'), 1`)
				time.Sleep(1500 * time.Millisecond)
			}
			b.eval(sid, fmt.Sprintf(clickDownload, fmt.Sprintf("/file/%s.bin?hdr=2500", stem)))
			switch tc.twin {
			case "close":
				b.eval(sid, "twin.close(), 1")
			case "away":
				b.eval(sid, "twin.location.href = '/page?elsewhere', 1")
			}
			b.eval(sid, "setTimeout(() => window.close(), 50), 1")
			buriedWaitFile(personsDownloads(), stem, 7*time.Second)
			for _, l := range s.lines() {
				t.Logf("server: %s", l)
			}
			landed := inPersonsDownloads(stem)
			t.Logf("person's Downloads: %q", landed)
			if len(landed) > 0 {
				t.Errorf("%s: a hostile page in a program's tab that denies downloads got its file into the person's Downloads folder: %q", tc.name, landed)
			}
		})
	}
}

// (a) The person's own tab on the very page a program's closed tab
// showed: the person clicks a download on a slow server and moves on to
// a page with many frames (a news site with its ads). RecentPages keeps
// 32 pages a tab, and past 32 origins spilled forgets the rest: the
// person's tab, which had earlier shown frames of more than 32 origins,
// no longer names the page, the program's closed tab alone does, and the
// person's download is denied.
// Denied 3 of 3 (red team, stop 42); a tab's top pages are now kept apart
// from its frames', and its frames are bounded.
func TestRedTeamHeavyPersonTabForgotten(t *testing.T) {
	t.Parallel() // a download test: its own servers and files; it waits on them beside the others
	for _, tc := range []struct {
		name  string
		heavy int
	}{
		{"control-light-page", 0},
		{"heavy-pages-40-frames", 40},
		// Past the LRU of origins (spilled, 32) that replaced the set.
		{"heavy-pages-80-frames", 80},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &buriedSite{}
			frames := recentFrameServers(t, 40)
			base := recentServe(t, s, frames)
			heavy := recentServe(t, s, frames) // another origin
			stem := fmt.Sprintf("rt-heavy-%s-%d", tc.name, time.Now().UnixNano())
			u, err := env.User(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer u.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
			defer cancel()
			loaded := `(async () => { for (let i = 0; i < 400; i++) { if (document.readyState === 'complete') return 1; await new Promise(r => setTimeout(r, 25)) } return 0 })()`
			n := tc.heavy
			person, err := u.OpenTab(ctx, fmt.Sprintf("%s/heavy?n=%d&k=1", heavy, n))
			if err != nil {
				t.Fatal(err)
			}
			closeUserTab(t, person)
			if _, err := u.Eval(ctx, person, loaded); err != nil {
				t.Fatal(err)
			}
			nav := func(url string) {
				u.Eval(ctx, person, fmt.Sprintf("location.href = %q, 1", url))
				time.Sleep(300 * time.Millisecond)
				for i := 0; i < 50; i++ {
					v, err := u.Eval(ctx, person, "location.href + ' ' + document.readyState")
					if err == nil && strings.Contains(string(v), "complete") && strings.Contains(string(v), url[len(url)-6:]) {
						return
					}
					time.Sleep(100 * time.Millisecond)
				}
				t.Logf("nav %s: not loaded", url)
			}
			nav(fmt.Sprintf("%s/heavy?n=%d&k=2", heavy, n))
			srv, tok := endpoint(t)
			b := dialRawTo(t, srv, tok)
			b.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "deny", "eventsEnabled": true})
			tid, sid := b.open(base + "/page?shop")
			b.eval(sid, "document.readyState === 'complete' || new Promise(r => onload = r)")
			nav(base + "/page?shop")
			time.Sleep(300 * time.Millisecond)
			b.must("", "Target.closeTarget", map[string]any{"targetId": tid})
			time.Sleep(300 * time.Millisecond)
			if _, err := u.Eval(ctx, person, fmt.Sprintf(clickDownload, fmt.Sprintf("/file/%s.bin?hdr=5000", stem))); err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
			nav(fmt.Sprintf("%s/heavy?n=%d&k=3", heavy, n))
			t.Logf("person's tab moved on at %s", time.Now().Format("15:04:05.000"))
			if landed, ok := personGotFile(t, s, stem, 9*time.Second); !ok {
				t.Errorf("%s: the person's own download (their own tab) is not in their Downloads folder: %q", tc.name, landed)
			}
		})
	}
}
