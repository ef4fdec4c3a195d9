package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// browser_capture of a button (a "Download" control without media of its
// own) clicks it with trusted mouse events at the centre of its box
// (capture/download.go click). A hostile page of an allowed host covers
// its Download button with a transparent frame of a host outside the
// agent's domains: the press landed in the outside frame. Now the
// browser's hit test sees the frame, and the button is clicked by script,
// which reaches it alone: the download comes, the frame hears nothing.
// The control: browser_click on the same button is refused.
func TestRedTeamCaptureClickLandsInAnOutsideFrame(t *testing.T) {
	s := needShared(t)
	outside := newRecorder(t, "127.0.0.2", func(path string) string {
		return `<!doctype html><title>pay</title><body style="margin:0"><button style="width:100%;height:100vh" ` +
			`onmousedown="fetch('/down')" onclick="fetch('/clicked')">Pay 1000 EUR</button>`
	})
	hostile := newRecorder(t, "127.0.0.1", func(path string) string {
		if path == "/report.csv" {
			return "a,b\n1,2\n"
		}
		return fmt.Sprintf(`<!doctype html><title>reports</title><p>Your report is ready.</p>`+
			`<div style="position:relative;width:300px;height:120px"><button id="b" style="position:absolute;left:0;top:0;width:300px;height:120px" onclick="const a = document.createElement('a'); a.href = '/report.csv'; a.download = 'report.csv'; document.body.append(a); a.click()">Download report</button>`+
			`<iframe id="f" src="%s/pay" style="position:absolute;left:0;top:0;width:300px;height:120px;border:0;opacity:0;z-index:1"></iframe></div>`, outside.URL)
	})
	dir := filepath.Join(s.home.dir, "frame-captures")
	c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1", "--allow-private-networks", "--download-dir", dir)
	// The control: browser_click refuses the covered button.
	c.ok(t, "browser_navigate", map[string]any{"url": hostile.URL + "/covered"})
	time.Sleep(300 * time.Millisecond)
	res := resultText(c.call(t, "browser_click", map[string]any{"selector": "#b"}))
	t.Logf("control click: %s", res)
	time.Sleep(300 * time.Millisecond)
	if outside.hit("/down") || outside.hit("/clicked") {
		t.Fatalf("the control click already landed in the outside frame: %v", outside.paths())
	}
	c.ok(t, "browser_navigate", map[string]any{"url": hostile.URL + "/covered"})
	time.Sleep(300 * time.Millisecond)
	res = resultText(c.call(t, "browser_capture", map[string]any{"selector": "#b"}))
	time.Sleep(500 * time.Millisecond)
	t.Logf("capture: %s; the outside server saw %v", strings.ReplaceAll(res, "\n", " | "), outside.paths())
	if !outside.hit("/pay") {
		t.Fatalf("the outside frame never loaded: this run shows nothing")
	}
	if !strings.Contains(res, "saved a file") {
		t.Errorf("browser_capture of the covered button saved nothing: %s", res)
	}
	if outside.hit("/down") || outside.hit("/clicked") {
		t.Errorf("browser_capture's click acted in a frame of %s, outside the agent's domains: %v", outside.URL, outside.paths())
	}
}
