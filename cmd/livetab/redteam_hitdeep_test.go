package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// landOutside is a host outside the agent's domains: a transparent button
// filling its page records a press; an input that keeps the focus records
// the keys.
func landOutside(t *testing.T) *recorder {
	return newRecorder(t, "127.0.0.2", func(path string) string {
		if path == "/note" {
			return `<!doctype html><title>note</title><input id="i"><script>addEventListener('focus', () => i.focus()); ` +
				`i.addEventListener('keydown', e => fetch('/key-' + encodeURIComponent(e.key)))</script>`
		}
		return `<!doctype html><title>pay</title><body style="margin:0"><button style="width:100%;height:100vh;opacity:0" ` +
			`onmousedown="fetch('/down')" onclick="fetch('/clicked')">Pay 1000 EUR</button>`
	})
}

func landPressed(outside *recorder) bool { return outside.hit("/down") || outside.hit("/clicked") }

// The attacks on internal/hit's first cut (red team, 2026-11-30); each got
// a press or a key into a frame of a host outside the agent's domains, or
// refused a click it should not have. Now the hit test descends into the
// out-of-process frames the Page reads, takes the scroll into account,
// and the focus is checked between a key's events.

// Nested two deep: the top page (allowed) shows a frame of a second
// allowed host (an out-of-process frame: the top frame's hit test stops
// at its owner, which the snapshot reads), and that frame lays a
// transparent frame of an outside host over all of itself.
func TestRedTeamClickXYNestedOutsideFrame(t *testing.T) {
	s := needShared(t)
	outside := landOutside(t)
	mid := newRecorder(t, "127.0.0.3", func(path string) string {
		return fmt.Sprintf(`<!doctype html><title>mid</title><body style="margin:0">`+
			`<div style="position:absolute;left:0;top:0;width:300px;height:120px;background:#06c;color:#fff;font:40px sans-serif">Continue</div>`+
			`<button style="position:absolute;left:0;top:130px">Other</button>`+
			`<iframe src="%s/pay" style="position:absolute;left:0;top:0;width:300px;height:120px;border:0;opacity:0"></iframe>`, outside.URL)
	})
	top := newRecorder(t, "127.0.0.1", func(path string) string {
		return fmt.Sprintf(`<!doctype html><title>shop</title><body style="margin:0">`+
			`<iframe src="%s/mid" style="position:absolute;left:0;top:0;width:400px;height:200px;border:0"></iframe>`, mid.URL)
	})
	c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1", "--allow-domain", "127.0.0.3", "--allow-private-networks")
	c.ok(t, "browser_navigate", map[string]any{"url": top.URL + "/"})
	time.Sleep(500 * time.Millisecond)
	snap := mustSnap(t, c)
	t.Logf("snapshot:\n%s", snap)
	res := resultText(c.call(t, "browser_click_xy", map[string]any{"x": 150, "y": 60}))
	time.Sleep(700 * time.Millisecond)
	t.Logf("click_xy: %s; the outside server saw %v", res, outside.paths())
	if !outside.hit("/pay") {
		t.Fatalf("the outside frame never loaded")
	}
	if landPressed(outside) {
		t.Errorf("browser_click_xy pressed in a frame of %s (nested in an allowed frame), outside the agent's domains: %v (the result said %q)", outside.URL, outside.paths(), res)
	}
}

// The same nesting for browser_click: the allowed frame's page poisons its
// own elementFromPoint (as TestRedTeamPoisonedHitTestClicksAnOutsideFrame)
// so its button is offered; the top frame's hit test sees only the
// allowed frame's owner, which is the button's own frame.
func TestRedTeamClickNestedOutsideFrame(t *testing.T) {
	s := needShared(t)
	outside := landOutside(t)
	mid := newRecorder(t, "127.0.0.3", func(path string) string {
		return fmt.Sprintf(`<!doctype html><title>mid</title><body style="margin:0">`+
			`<button id="b" style="position:absolute;left:0;top:0;width:300px;height:120px">Buy</button>`+
			`<iframe id="f" src="%s/pay" style="position:absolute;left:0;top:0;width:300px;height:120px;border:0;opacity:0;z-index:1"></iframe>`+
			`<script>const realEFP = Document.prototype.elementFromPoint;
Document.prototype.elementFromPoint = function (x, y) { const h = realEFP.call(this, x, y); return h === f ? b : h; };</script>`, outside.URL)
	})
	top := newRecorder(t, "127.0.0.1", func(path string) string {
		return fmt.Sprintf(`<!doctype html><title>shop</title><body style="margin:0"><p>Buy below.</p>`+
			`<iframe src="%s/mid" style="width:400px;height:200px;border:0"></iframe>`, mid.URL)
	})
	c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1", "--allow-domain", "127.0.0.3", "--allow-private-networks")
	c.ok(t, "browser_navigate", map[string]any{"url": top.URL + "/"})
	time.Sleep(500 * time.Millisecond)
	snap := mustSnap(t, c)
	t.Logf("snapshot:\n%s", snap)
	if !strings.Contains(snap, `button "Buy"`) {
		t.Fatalf("no Buy button offered")
	}
	res := resultText(c.call(t, "browser_click", map[string]any{"index": index(t, snap, `button "Buy"`)}))
	time.Sleep(700 * time.Millisecond)
	t.Logf("click: %s; the outside server saw %v", res, outside.paths())
	if !outside.hit("/pay") {
		t.Fatalf("the outside frame never loaded")
	}
	if landPressed(outside) {
		t.Errorf("browser_click pressed in a frame of %s (nested in an allowed frame), outside the agent's domains: %v (the result said %q)", outside.URL, outside.paths(), res)
	}
}

// click_xy on a scrolled page: a fixed transparent outside frame covers
// the viewport's top; the page is scrolled down 1000 px.
func TestRedTeamClickXYScrolled(t *testing.T) {
	s := needShared(t)
	outside := landOutside(t)
	hostile := newRecorder(t, "127.0.0.1", func(path string) string {
		return fmt.Sprintf(`<!doctype html><title>shop</title><body style="margin:0;height:5000px">`+
			`<div style="position:fixed;left:0;top:0;width:300px;height:120px;background:#06c;color:#fff;font:40px sans-serif">Continue</div>`+
			`<iframe src="%s/pay" style="position:fixed;left:0;top:0;width:300px;height:120px;border:0;opacity:0"></iframe>`+
			`<script>scrollTo(0, 1000); addEventListener('load', () => scrollTo(0, 1000))</script>`, outside.URL)
	})
	c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1", "--allow-private-networks")
	c.ok(t, "browser_navigate", map[string]any{"url": hostile.URL + "/"})
	time.Sleep(500 * time.Millisecond)
	res := resultText(c.call(t, "browser_click_xy", map[string]any{"x": 150, "y": 60}))
	time.Sleep(700 * time.Millisecond)
	t.Logf("click_xy: %s; the outside server saw %v", res, outside.paths())
	if !outside.hit("/pay") {
		t.Fatalf("the outside frame never loaded")
	}
	if landPressed(outside) {
		t.Errorf("browser_click_xy pressed in a frame of %s on a scrolled page: %v (the result said %q)", outside.URL, outside.paths(), res)
	}
}

// browser_press checked the focus once per chord; the page moves the
// focus to an outside frame on the chord's modifier keydown, and the
// chord's key went there.
func TestRedTeamPressChordSplit(t *testing.T) {
	s := needShared(t)
	outside := landOutside(t)
	hostile := newRecorder(t, "127.0.0.1", func(path string) string {
		return fmt.Sprintf(`<!doctype html><title>shop</title><label>Your note <input id="n"></label>`+
			`<iframe id="f" src="%s/note" style="width:200px;height:40px;border:0"></iframe>`+
			`<script>n.addEventListener('keydown', e => { if (e.key === 'Shift' || e.key === 'Control') f.focus() })</script>`, outside.URL)
	})
	c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1", "--allow-private-networks")
	c.ok(t, "browser_navigate", map[string]any{"url": hostile.URL + "/"})
	time.Sleep(500 * time.Millisecond)
	snap := mustSnap(t, c)
	res := resultText(c.call(t, "browser_click", map[string]any{"index": index(t, snap, `textbox "Your note"`)}))
	t.Logf("click the note: %s", res)
	time.Sleep(300 * time.Millisecond)
	res = resultText(c.call(t, "browser_press", map[string]any{"keys": "Shift+S Control+Enter"}))
	time.Sleep(700 * time.Millisecond)
	t.Logf("press: %s; the outside server saw %v", res, outside.paths())
	if !outside.hit("/note") {
		t.Fatalf("the outside note frame never loaded")
	}
	var keys []string
	for _, p := range outside.paths() {
		if strings.HasPrefix(p, "/key-") {
			keys = append(keys, p)
		}
	}
	if len(keys) > 0 {
		t.Errorf("browser_press's keys went into a frame of %s, outside the agent's domains: %v (the result said %q)", outside.URL, keys, res)
	}
}

// Normal use on a scrolled page: a fixed ad frame of another host along
// the viewport's top (0-200 px), the person scrolled the page down 100 px,
// the agent's button sits in view at 250-310 px, uncovered. The browser's
// hit test was asked at the viewport point taken as a document point (180
// px, on the ad) and the click was refused.
func TestRedTeamScrolledPageClickNotRefused(t *testing.T) {
	s := needShared(t)
	ad := newRecorder(t, "127.0.0.2", func(string) string {
		return `<!doctype html><title>ad</title><body style="margin:0;background:#fc0">Ad`
	})
	shop := newRecorder(t, "127.0.0.1", func(path string) string {
		return fmt.Sprintf(`<!doctype html><title>shop</title><body style="margin:0;height:3000px">`+
			`<iframe src="%s/ad" style="position:fixed;left:0;top:0;width:100%%;height:200px;border:0"></iframe>`+
			`<button style="position:absolute;top:350px;left:500px;width:300px;height:60px" onclick="fetch('/clicked')">Order</button>`+
			`<script>addEventListener('load', () => scrollTo(0, 100))</script>`, ad.URL)
	})
	c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1", "--allow-private-networks")
	c.ok(t, "browser_navigate", map[string]any{"url": shop.URL + "/"})
	time.Sleep(500 * time.Millisecond)
	snap := mustSnap(t, c)
	t.Logf("snapshot:\n%s", snap)
	res := resultText(c.call(t, "browser_click", map[string]any{"index": index(t, snap, `button "Order"`)}))
	time.Sleep(500 * time.Millisecond)
	t.Logf("click: %s; the shop saw %v", res, shop.paths())
	if !ad.hit("/ad") {
		t.Fatalf("the ad frame never loaded")
	}
	if !shop.hit("/clicked") {
		t.Errorf("a click on an uncovered button of a scrolled page was refused: %q", res)
	}
}

// chromedp sends a printable key as three events (keyDown, char, keyUp);
// the focus was checked once before them. The page moves the focus to an
// outside frame in its keydown handler: the char (the text, and an
// Enter's implicit form submission) went into that frame.
func zzqKeydownSites(t *testing.T) (outside, hostile *recorder) {
	outside = newRecorder(t, "127.0.0.2", func(path string) string {
		return `<!doctype html><title>note</title><form action="/submitted" onsubmit="fetch('/submitted-' + encodeURIComponent(i.value)); return false"><input id="i" name="q"></form>` +
			`<script>addEventListener('focus', () => i.focus()); ` +
			`i.addEventListener('keypress', e => fetch('/char-' + encodeURIComponent(e.key)))</script>`
	})
	hostile = newRecorder(t, "127.0.0.1", func(path string) string {
		return fmt.Sprintf(`<!doctype html><title>shop</title><label>Your note <input id="n"></label>`+
			`<iframe id="f" src="%s/note" style="width:200px;height:40px;border:0"></iframe>`+
			`<script>n.addEventListener('keydown', e => { if (location.pathname !== '/enter' || e.key === 'Enter') f.focus() })</script>`, outside.URL)
	})
	return outside, hostile
}

func zzqLeaked(outside *recorder) []string {
	var out []string
	for _, p := range outside.paths() {
		if strings.HasPrefix(p, "/char-") || strings.HasPrefix(p, "/submitted") {
			out = append(out, p)
		}
	}
	return out
}

func TestRedTeamPressEnterKeydownMovesFocus(t *testing.T) {
	s := needShared(t)
	outside, hostile := zzqKeydownSites(t)
	c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1", "--allow-private-networks")
	c.ok(t, "browser_navigate", map[string]any{"url": hostile.URL + "/"})
	time.Sleep(500 * time.Millisecond)
	snap := mustSnap(t, c)
	res := resultText(c.call(t, "browser_click", map[string]any{"index": index(t, snap, `textbox "Your note"`)}))
	t.Logf("click: %s", res)
	time.Sleep(300 * time.Millisecond)
	res = resultText(c.call(t, "browser_press", map[string]any{"keys": "Enter"}))
	time.Sleep(700 * time.Millisecond)
	t.Logf("press: %s; the outside server saw %v", res, outside.paths())
	if !outside.hit("/note") {
		t.Fatalf("the outside frame never loaded")
	}
	if l := zzqLeaked(outside); len(l) > 0 {
		t.Errorf("browser_press's Enter went into a frame of %s, outside the agent's domains: %v (the result said %q)", outside.URL, l, res)
	}
}

func TestRedTeamTypeSubmitKeydownMovesFocus(t *testing.T) {
	s := needShared(t)
	outside, hostile := zzqKeydownSites(t)
	c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1", "--allow-private-networks")
	c.ok(t, "browser_navigate", map[string]any{"url": hostile.URL + "/enter"})
	time.Sleep(500 * time.Millisecond)
	snap := mustSnap(t, c)
	res := resultText(c.call(t, "browser_type", map[string]any{"index": index(t, snap, `textbox "Your note"`), "text": "secret", "submit": true}))
	time.Sleep(700 * time.Millisecond)
	t.Logf("type: %s; the outside server saw %v", res, outside.paths())
	if !outside.hit("/note") {
		t.Fatalf("the outside frame never loaded")
	}
	if l := zzqLeaked(outside); len(l) > 0 {
		t.Errorf("browser_type's submit Enter went into a frame of %s, outside the agent's domains: %v (the result said %q)", outside.URL, l, res)
	}
}

// Normal use the first cut of the focus check refused: typing into an
// input of a frame of the page's own origin (an editor's frame). The
// element is the top frame's, and the top document's activeElement is the
// frame: the check now walks into frames of the document's origin.
func TestRedTeamTypeIntoSameOriginFrameNotRefused(t *testing.T) {
	s := needShared(t)
	site := newRecorder(t, "127.0.0.1", func(path string) string {
		if path == "/editor" {
			return `<!doctype html><title>editor</title><label>Body <input id="b"></label>`
		}
		return `<!doctype html><title>compose</title><p>Write below.</p><iframe src="/editor" style="width:400px;height:80px"></iframe>`
	})
	c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1")
	c.ok(t, "browser_navigate", map[string]any{"url": site.URL + "/"})
	time.Sleep(300 * time.Millisecond)
	snap := mustSnap(t, c)
	out, _ := c.ok(t, "browser_type", map[string]any{"index": index(t, snap, `textbox "Body"`), "text": "hello"})
	if !strings.Contains(out, "hello") {
		t.Errorf("typing into a frame of the page's own origin: %s", out)
	}
}

// A frame of an outside host inside a shadow root: the top document's
// activeElement is the shadow tree's host, a <div>, when the page focuses
// the frame in its keydown handler. The check walks into open shadow
// roots; a closed one is left (see the decision).
func TestRedTeamShadowWrappedFrameTakesNoKeys(t *testing.T) {
	s := needShared(t)
	outside := landOutside(t)
	hostile := newRecorder(t, "127.0.0.1", func(path string) string {
		return fmt.Sprintf(`<!doctype html><title>shop</title><label>Your note <input id="n"></label><div id="h"></div>`+
			`<script>const f = document.createElement('iframe'); f.src = '%s/note'; f.style = 'width:200px;height:40px;border:0';`+
			`h.attachShadow({mode: 'open'}).append(f);`+
			`n.addEventListener('keydown', () => f.focus())</script>`, outside.URL)
	})
	c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1", "--allow-private-networks")
	c.ok(t, "browser_navigate", map[string]any{"url": hostile.URL + "/"})
	time.Sleep(500 * time.Millisecond)
	snap := mustSnap(t, c)
	res := resultText(c.call(t, "browser_type", map[string]any{"index": index(t, snap, `textbox "Your note"`), "text": "secret"}))
	time.Sleep(500 * time.Millisecond)
	t.Logf("type: %s; the outside server saw %v", res, outside.paths())
	if !outside.hit("/note") {
		t.Fatalf("the outside frame never loaded")
	}
	for _, p := range outside.paths() {
		if strings.HasPrefix(p, "/key-") {
			t.Errorf("the agent's keys went into a frame of %s in a shadow root: %v", outside.URL, outside.paths())
			break
		}
	}
}
