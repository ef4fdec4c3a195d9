package extcdp_test

import (
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"
)

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
	t.Parallel() // a download test: its own servers and files; it waits on them beside the others
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
			site := serveFrameSites(t)
			name := fmt.Sprintf("framedl-%d.bin", time.Now().UnixNano())
			framed, opener := site.framedDownload(name, tc.crossSite)
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
				b.navigate(sid, opener)
				b.eval(sid, "document.getElementById('x').click(), 1")
				t.Cleanup(func() {
					if pid, _ := waitPopupAttached(b, tid, true, time.Second); pid != "" {
						b.call("", "Target.closeTarget", map[string]any{"targetId": pid})
					}
				})
			} else if tc.popup {
				b.navigate(sid, opener)
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
				b.navigate(sid, framed)
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
				if got := landedNamed(name, 5*time.Second); len(got) > 0 {
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
			if got := landedNamed(name, 2*time.Second); len(got) > 0 {
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
	site := serveFrameSites(t)
	_, opener := site.framedDownload("never.bin", true)
	s, tok := endpoint(t)
	b := dialRawTo(t, s, tok)
	b.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "deny"})
	tid, sid := b.open(opener)
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

// framedDownload gives a page of the first site that frames a page
// downloading /file/name once released (of another site when crossSite),
// and a page whose link #x opens the first in a new tab.
func (s *frameSites) framedDownload(name string, crossSite bool) (framed, opener string) {
	frame := s.a
	if crossSite {
		// localhost is another site than 127.0.0.1: the frame runs in a
		// process of its own, a target with a session of its own.
		frame = s.lh
	}
	framed = s.a + "/top?f=" + url.QueryEscape(frame+"/inner?n="+name)
	return framed, s.a + "/opener?f=" + url.QueryEscape(framed)
}
