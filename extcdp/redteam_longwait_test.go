package extcdp_test

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// A hostile page in a tab whose client denies downloads clicks a download
// whose server holds its headers for 70 s, and closes its own tab. The
// download begins in Chrome long after the tab is gone. The extension
// named the tabs that showed the page in the last minute, and the relay
// kept a closed tab for a minute: past that the download was no one's and
// landed in the person's Downloads folder (1 of 1, 2026-12-01).
func TestRedTeamDeniedPageWaitsOutTheMinute(t *testing.T) {
	t.Parallel() // it waits: beside the package's other waiting tests
	stem := fmt.Sprintf("rt-longwait-%d", time.Now().UnixNano())
	s, base := slowDownloadServer(t)
	srv, tok := endpoint(t)
	b := dialRawTo(t, srv, tok)
	b.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "deny", "eventsEnabled": true})
	tid, sid := b.open(base + "/page")
	t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": tid}) })
	b.must(sid, "Page.enable", nil)
	b.eval(sid, "document.readyState === 'complete' || new Promise(r => onload = r)")
	b.eval(sid, fmt.Sprintf(clickDownload, fmt.Sprintf("/file/%s.bin?hdr=70000&body=300", stem)))
	b.eval(sid, "setTimeout(() => window.close(), 50), 1")
	for deadline := time.Now().Add(80 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if finishedIn(personsDownloads(), stem) {
			break
		}
	}
	time.Sleep(800 * time.Millisecond)
	for _, l := range s.lines() {
		t.Logf("server: %s", l)
	}
	if landed := inPersonsDownloads(stem); len(landed) > 0 {
		t.Errorf("a deny tab's page got its file into the person's Downloads by holding the headers for 70 s: %q", landed)
	}
}

// The person clicks a download of a report their server takes 64 s to
// answer, on page P, and moves on. A program that denies downloads visits
// P in a tab of its own 10 s later and closes it. When Chrome begins the
// person's download, the person's tab showed P more than a minute ago:
// the extension named only the closed program's tab, whose deny took the
// person's file (2 of 2, 2026-11-30).
func TestRedTeamPersonsSlowDownloadLongAgo(t *testing.T) {
	t.Parallel() // it waits: beside the package's other waiting tests
	s := &buriedSite{}
	base := buriedServe(t, "127.0.0.1", s)
	other := buriedServe(t, "127.0.0.3", s)
	stem := fmt.Sprintf("rt-longago-%d", time.Now().UnixNano())
	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	person, err := u.OpenTab(ctx, base+"/page?shop")
	if err != nil {
		t.Fatal(err)
	}
	closeUserTab(t, person)
	if _, err := u.Eval(ctx, person, `document.readyState === 'complete' || new Promise(r => onload = r)`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if _, err := u.Eval(ctx, person, fmt.Sprintf(clickDownload, fmt.Sprintf("/file/%s.bin?hdr=64000", stem))); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	u.Eval(ctx, person, fmt.Sprintf("location.href = %q, 1", other+"/page?elsewhere"))
	time.Sleep(10 * time.Second)
	srv, tok := endpoint(t)
	b := dialRawTo(t, srv, tok)
	b.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "deny", "eventsEnabled": true})
	tid, sid := b.open(base + "/page?shop")
	b.eval(sid, "document.readyState === 'complete' || new Promise(r => onload = r)")
	time.Sleep(2 * time.Second)
	b.must("", "Target.closeTarget", map[string]any{"targetId": tid})
	landed, ok := personGotFile(t, s, stem, 60*time.Second)
	for _, e := range b.downloadEvents() {
		t.Logf("program heard %s", e)
	}
	if !ok {
		t.Errorf("the person's own slow download was taken by a program's closed tab that visited the page later: %q", landed)
	}
}
