//go:build unix

package extcdp_test

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRedTeamFIFOHoldsNoPersonsTab: client A navigates a tab the person
// opened, which client B uses too, to a file: URL of a FIFO no one writes.
// Chrome's file loader waits in open() for a writer that never comes, and
// until the person navigated the tab away it answered no debugger: not B,
// not the person's own DevTools, and A's Page.navigate was never answered
// (red team, 4 of 4). Each way of spelling the file (a link to it
// included) and a device must be refused at once, with why, and the tab
// must answer B and the person after. A client's new tab on the FIFO too.
func TestRedTeamFIFOHoldsNoPersonsTab(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo page.html")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.html")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain.html")
	os.WriteFile(plain, []byte("<title>plain</title>"), 0o600)
	esc := (&url.URL{Path: fifo}).EscapedPath()
	a, b, sa, sb := sharedTab(t, "/form?fifo-person")
	b.bound = 10 * time.Second
	a.bound = 10 * time.Second
	var id string
	for _, ts := range env.Relay.Status().Tabs {
		if strings.Contains(ts.URL, "fifo-person") {
			id = ts.TargetID
		}
	}
	onPerson := func(method string, params any) (string, error) { return onPersonTab(id, method, params) }
	// Should a navigation get through, the person's tab would stay held for
	// the other tests of this browser: the person takes it back.
	t.Cleanup(func() { onPerson("Page.navigate", map[string]any{"url": site.URL + "/form?fifo-person-back"}) })
	for _, u := range []string{
		"file://" + esc,
		"file://localhost" + esc,
		"file:" + esc + "#x",
		"FILE://" + strings.ReplaceAll(esc, "/", `\`),
		"file://" + (&url.URL{Path: link}).EscapedPath(),
		"file:///dev/zero",
	} {
		start := time.Now()
		r, err := a.send(sa, "Page.navigate", map[string]any{"url": u})
		took := time.Since(start)
		t.Logf("Page.navigate %s: %s %v %v in %v", u, r.Result, r.Error, err, took.Round(time.Millisecond))
		if err != nil {
			t.Fatalf("Page.navigate %s: %v (the tab now waits on the file)", u, err)
		}
		if r.Error == nil || !strings.Contains(r.Error.Message, "not a regular file") {
			t.Errorf("Page.navigate %s: want a refusal that says the file is no regular file, got %s %v", u, r.Result, r.Error)
		}
		if v, err := b.evalJSON(sb, "location.href"); err != nil || !strings.Contains(v, "fifo-person") {
			t.Errorf("after A's Page.navigate %s, B's eval: %s %v", u, v, err)
		}
	}
	if v, err := onPerson("Runtime.evaluate", map[string]any{"expression": "location.href", "returnByValue": true}); err != nil || !strings.Contains(v, "fifo-person") {
		t.Errorf("the person's own port: %s %v", v, err)
	}
	r, err := a.send("", "Target.createTarget", map[string]any{"url": "file://" + esc})
	if err != nil || r.Error == nil || !strings.Contains(r.Error.Message, "named pipe") {
		t.Errorf("Target.createTarget of the FIFO: %s %v %v; want a refusal", r.Result, r.Error, err)
	}
	// A regular file still loads.
	if _, err := a.call(sa, "Page.navigate", map[string]any{"url": "file://" + (&url.URL{Path: plain}).EscapedPath()}); err != nil {
		t.Errorf("Page.navigate to a regular file: %v", err)
	}
}
