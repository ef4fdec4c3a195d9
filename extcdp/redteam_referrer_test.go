package extcdp_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"
)

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
			s := serveFrameSites(t)
			s.slow.Store(true)
			name := fmt.Sprintf("rpersons-%s-%d.bin", tc, time.Now().UnixNano())
			var inner, programURL string
			if tc == "origin" {
				inner = s.c + "/inner?f=" + url.QueryEscape(s.lh+"/file/"+name)
				programURL = s.c + "/prog"
			} else {
				inner = s.c + "/inner?f=" + url.QueryEscape(s.c+"/file/"+name)
				programURL = inner
			}
			personsTab(t, s.b+"/top?f="+url.QueryEscape(inner))
			b := denyingProgram(t)
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
	t.Parallel() // a download test: its own servers and files; it waits on them beside the others
	for _, tc := range []string{"origin", "exact"} {
		t.Run(tc, func(t *testing.T) {
			s := serveFrameSites(t)
			s.slow.Store(true)
			name := fmt.Sprintf("rhostile-%s-%d.bin", tc, time.Now().UnixNano())
			var inner, personURL string
			if tc == "origin" {
				inner = s.c + "/inner?f=" + url.QueryEscape(s.lh+"/file/"+name)
				personURL = s.c + "/mine"
			} else {
				inner = s.c + "/inner?f=" + url.QueryEscape(s.c+"/file/"+name)
				personURL = inner
			}
			personsTab(t, personURL)
			b := denyingProgram(t)
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
	b := denyingProgram(t)
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
