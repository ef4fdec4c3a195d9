package extcdp_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A download into a client's directory has the name Chrome suggested, as
// with Browser.setDownloadBehavior on plain Chrome, even when the person's
// Downloads folder, where Chrome writes it first, holds a file of that name
// already: it was "name (1).bin" (a compat sweep of Puppeteer's
// downloadBehavior, after any earlier download of the same name).
//
// With Page on, the name is the one Page.downloadWillBegin suggests; with
// no session told of it, Chrome's " (N)" is taken off the name it wrote.
// A page that names its file "x (1).bin" itself keeps that name when Page
// tells of it (red team: the relay took the number off).
func TestDownloadKeepsItsNameInTheClientsDirectory(t *testing.T) {
	for _, tc := range []struct{ pageOn, numbered bool }{{false, false}, {true, false}, {true, true}} {
		t.Run(fmt.Sprintf("page-on=%v/numbered=%v", tc.pageOn, tc.numbered), func(t *testing.T) { downloadKeepsItsName(t, tc.pageOn, tc.numbered) })
	}
}

func downloadKeepsItsName(t *testing.T, pageOn, numbered bool) {
	stem := fmt.Sprintf("samename-%d", time.Now().UnixNano())
	name := stem + ".bin"
	taken := filepath.Join(personsDownloads(), name)
	if numbered {
		name = stem + " (1).bin"
	}
	if err := os.MkdirAll(personsDownloads(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(taken, []byte("the person's"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.Remove(taken)
		landedNamed(stem, 0)
	})
	srv := loopbackServer(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/file" {
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
			fmt.Fprint(w, "the program's")
			return
		}
		fmt.Fprint(w, `<!doctype html><title>page</title><a id="x" href="/file">file</a>`)
	}))
	s, tok := endpoint(t)
	b := dialRawTo(t, s, tok)
	dir := t.TempDir()
	b.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "allow", "downloadPath": dir, "eventsEnabled": true})
	tid, sid := b.open(srv.URL + "/page")
	t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": tid}) })
	if pageOn {
		b.must(sid, "Page.enable", nil)
	}
	b.eval(sid, "document.getElementById('x').click(), 1")
	for deadline := time.Now().Add(15 * time.Second); !b.hasEvent("Browser.downloadProgress", `"completed"`) && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	if !b.hasEvent("Browser.downloadProgress", `"completed"`) {
		t.Fatal("the download never completed")
	}
	got, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		files, _ := os.ReadDir(dir)
		var names []string
		for _, f := range files {
			names = append(names, f.Name())
		}
		t.Fatalf("the program's directory holds %q, want %s: %v", names, name, err)
	}
	if string(got) != "the program's" {
		t.Errorf("%s holds %q", name, got)
	}
	if b, _ := os.ReadFile(taken); string(b) != "the person's" {
		t.Errorf("the person's %s now holds %q", name, b)
	}
}
