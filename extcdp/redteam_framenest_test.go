package extcdp_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"
)

// A program denies downloads and drives a tab whose page (hostile) holds
// frames of other sites downloading: nested (a frame of another site in a
// frame of a third), with and without the program's auto-attach, a frame
// that downloads the moment it loads, one inserted after the deny. The
// relay turns Page on only in the frames attached to the tab itself; a
// frame nested in another site's, or any frame where the program never
// auto-attached, was never heard of, and its download landed in the
// person's Downloads folder (red team, nested and no-autoattach each 3 of
// 3). The extension now names the tab whose frame shows the download's
// referrer.
func TestRedTeamNestedAndUnwatchedFrameDownloadsDenied(t *testing.T) {
	t.Parallel() // a download test: its own servers and files; it waits on them beside the others
	for _, tc := range []struct {
		name       string
		autoAttach bool
		build      func(s *frameSites, n string) (page string, insert string)
		now        bool
	}{
		{"nested-cross-cross/autoattach", true, func(s *frameSites, n string) (string, string) {
			return s.a + "/top?f=" + s.c + "/mid?f=" + s.lh + "/inner?n=" + n, ""
		}, false},
		{"nested-cross-cross/no-referrer/autoattach", true, func(s *frameSites, n string) (string, string) {
			return s.a + "/top?f=" + url.QueryEscape(s.c+"/mid?f="+url.QueryEscape(s.lh+"/inner?nr=1&n="+n)), ""
		}, false},
		{"nested-cross-same-as-mid/autoattach", true, func(s *frameSites, n string) (string, string) {
			return s.a + "/top?f=" + s.c + "/mid?f=" + s.c + "/inner?n=" + n, ""
		}, false},
		{"cross/no-autoattach", false, func(s *frameSites, n string) (string, string) {
			return s.a + "/top?f=" + s.lh + "/inner?n=" + n, ""
		}, false},
		{"cross/at-load/autoattach", true, func(s *frameSites, n string) (string, string) {
			return s.a + "/page", s.lh + "/inner?now=1&n=" + n
		}, true},
		{"srcdoc-in-cross/autoattach", true, func(s *frameSites, n string) (string, string) {
			return s.a + "/page", "SRCDOC:" + s.lh + "/file/" + n
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := serveFrameSites(t)
			name := fmt.Sprintf("nestframe-%d.bin", time.Now().UnixNano())
			page, insert := tc.build(s, name)
			b := denyingProgram(t)
			tid, sid := b.open("about:blank")
			t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": tid}) })
			b.must(sid, "Page.enable", nil)
			if tc.autoAttach {
				b.must(sid, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
			}
			b.navigate(sid, page)
			if strings.HasPrefix(insert, "SRCDOC:") {
				// A frame of another site whose srcdoc child (same process
				// as it) downloads a file of that site.
				u := strings.TrimPrefix(insert, "SRCDOC:")
				mid := s.lh + "/page"
				b.eval(sid, fmt.Sprintf(`(() => { const f = document.createElement('iframe'); f.src = %q; document.body.append(f); return 1 })()`, mid))
				time.Sleep(1500 * time.Millisecond)
				child := ""
				b.mu.Lock()
				for _, e := range b.events {
					if e.Method == "Target.attachedToTarget" && e.SessionID == sid && strings.Contains(string(e.Params), `"iframe"`) {
						child = field(e.Params, "sessionId")
					}
				}
				b.mu.Unlock()
				if child == "" {
					t.Fatal("no child attached: this run shows nothing")
				}
				s.release.Store(true)
				b.eval(child, fmt.Sprintf(`(() => { const f = document.createElement('iframe'); f.srcdoc = '<a id=a href="%s" download>x</a><script>document.getElementById("a").click()</scr'+'ipt>'; document.body.append(f); return 1 })()`, u))
			} else if insert != "" {
				time.Sleep(500 * time.Millisecond)
				b.eval(sid, fmt.Sprintf(`(() => { const f = document.createElement('iframe'); f.src = %q; document.body.append(f); return 1 })()`, insert))
			} else {
				time.Sleep(1500 * time.Millisecond)
			}
			s.fire(t)
			for deadline := time.Now().Add(8 * time.Second); !b.hasEvent("Browser.downloadProgress", `"canceled"`) && time.Now().Before(deadline); {
				time.Sleep(100 * time.Millisecond)
			}
			heard := b.hasEvent("Browser.downloadProgress", `"canceled"`)
			if got := landedNamed(name, 3*time.Second); len(got) > 0 {
				t.Errorf("the frame's download landed in the person's Downloads folder despite the program's deny: %v (program heard canceled: %v)", got, heard)
			} else if !heard {
				t.Errorf("the program never heard its frame's download canceled (nothing landed)")
			}
		})
	}
}
