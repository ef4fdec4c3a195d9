package extcdp_test

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// The person's own download from a slow server, in their own tab, which
// they leave (navigate away or close) a moment after the click, while a
// program that denies downloads has its tab OPEN on the same page (or on
// another page of the site, the person's site sending its origin alone).
// The extension then finds one open tab showing the referrer (the
// program's) and never asks RecentPages, which knows the person's tab
// showed it 0.1 s ago.
// The person's download was canceled 2 of 2 each (red team, stop 42);
// now an open tab is named only when no other tab showed the page of late.
func TestRedTeamPersonLeavesProgramTabOpen(t *testing.T) {
	t.Parallel() // a download test: its own servers and files; it waits on them beside the others
	for _, tc := range []struct {
		name, rp string
		samePage bool
		leave    string
	}{
		{"control-stays", "", true, ""},
		{"same-page-navigates-away", "", true, "navigate"},
		{"same-page-closes-tab", "", true, "close"},
		{"rp-origin-navigates-away", "origin", false, "navigate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &buriedSite{}
			base := buriedServe(t, "127.0.0.1", s)
			other := buriedServe(t, "127.0.0.3", s)
			stem := fmt.Sprintf("rt-person-%s-%d", tc.name, time.Now().UnixNano())
			progPage, personPage := "/page?program", "/page?person"
			if tc.samePage {
				progPage, personPage = "/page?shop", "/page?shop"
			}
			if tc.rp != "" {
				progPage += "&rp=" + tc.rp
				personPage += "&rp=" + tc.rp
			}
			u, err := env.User(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer u.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			srv, tok := endpoint(t)
			b := dialRawTo(t, srv, tok)
			b.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "deny", "eventsEnabled": true})
			tid, sid := b.open(base + progPage)
			t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": tid}) })
			b.eval(sid, "document.readyState === 'complete' || new Promise(r => onload = r)")
			person, err := u.OpenTab(ctx, base+personPage)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := u.Eval(ctx, person, `document.readyState === 'complete' || new Promise(r => onload = r)`); err != nil {
				t.Fatal(err)
			}
			closeUserTab(t, person)
			time.Sleep(500 * time.Millisecond)
			if _, err := u.Eval(ctx, person, fmt.Sprintf(clickDownload, fmt.Sprintf("/file/%s.bin?hdr=1500", stem))); err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
			switch tc.leave {
			case "navigate":
				u.Eval(ctx, person, fmt.Sprintf("location.href = %q, 1", other+"/page?elsewhere"))
			case "close":
				u.CloseTab(ctx, person)
			}
			landed, ok := personGotFile(t, s, stem, 6*time.Second)
			for _, e := range b.downloadEvents() {
				t.Logf("program heard %s", e)
			}
			if !ok {
				t.Errorf("%s: the person's own download is not in their Downloads folder (program's deny tab open on the site): %q", tc.name, landed)
			}
		})
	}
}
