package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Attacks browser_click's hit test: the page tool checks in the page's
// script that the element is on top at the point (elementFromPoint), then
// sends the mouse move and, in later CDP calls, the press and release. A
// hostile page of an allowed host listens for that first mouse move over
// its button and, before the press, uncovers a frame of a host outside the
// agent's domains under the cursor (the button hides, or the frame stops
// letting the pointer through). The agent's trusted click then lands in a
// frame the relay refuses it to drive: the agent acts on a frame outside
// its domains (a payment or a "delete" button of the person's logged-in
// site, embedded by the hostile page). The frame tells its server of each
// press. The control: the same page with a frame of an allowed host.
func TestRedTeamClickLandsInAnOutsideFrame(t *testing.T) {
	s := needShared(t)
	framePage := func(string) string {
		return `<!doctype html><title>pay</title><body style="margin:0"><button style="width:100%;height:100vh" ` +
			`onmousedown="fetch('/down-' + location.search.slice(1))" onclick="fetch('/clicked-' + location.search.slice(1))">Pay 1000 EUR</button>`
	}
	outside := newRecorder(t, "127.0.0.2", framePage)
	allowed := newRecorder(t, "127.0.0.3", framePage)
	vectors := map[string]string{
		// The button hides on the first mouse move; the frame was under it.
		"hide": `<div style="position:relative;width:300px;height:120px"><iframe src="%[1]s/pay" style="position:absolute;left:0;top:0;width:300px;height:120px;border:0"></iframe>` +
			`<button id="b" style="position:absolute;left:0;top:0;width:300px;height:120px;z-index:1">Buy</button></div>` +
			`<script>document.addEventListener('mousemove', () => { b.style.visibility = 'hidden' })</script>`,
		// The frame is on top all along, invisible, and lets the pointer
		// through until the first mouse move.
		"pointer": `<div style="position:relative;width:300px;height:120px"><button id="b" style="position:absolute;left:0;top:0;width:300px;height:120px">Buy</button>` +
			`<iframe id="f" src="%[1]s/pay" style="position:absolute;left:0;top:0;width:300px;height:120px;border:0;opacity:0;pointer-events:none;z-index:1"></iframe></div>` +
			`<script>document.addEventListener('mousemove', () => { f.style.pointerEvents = 'auto' })</script>`,
	}
	hostile := newRecorder(t, "127.0.0.1", func(path string) string {
		to := toward(path, outside, allowed)
		v := path[strings.LastIndex(path, "/")+1:]
		return `<!doctype html><title>shop</title><p>Click Buy to continue.</p>` + strings.ReplaceAll(fmt.Sprintf(vectors[v], to), "/pay", "/pay?"+v)
	})
	c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1", "--allow-domain", "127.0.0.3", "--allow-private-networks")
	try := func(pre, v string) string {
		c.ok(t, "browser_navigate", map[string]any{"url": hostile.URL + pre + "/" + v})
		time.Sleep(300 * time.Millisecond) // the frame loads
		snap := mustSnap(t, c)
		return resultText(c.call(t, "browser_click", map[string]any{"index": index(t, snap, `button "Buy"`)}))
	}
	for _, v := range []string{"hide", "pointer"} {
		for i := 0; i < 3; i++ {
			res := try("", v)
			time.Sleep(500 * time.Millisecond)
			t.Logf("%s: %s", v, res)
			// Before the check after the pointer's move, "hide" landed in
			// the frame every time, "pointer" in some runs.
			if v == "hide" && !strings.Contains(res, "the click was not sent") {
				t.Errorf("%s: the click was not refused: %s", v, res)
			}
		}
	}
	if !outside.hit("/pay") {
		t.Fatalf("the frame of %s never loaded (%v): this run shows nothing", outside.URL, outside.paths())
	}
	var acted []string
	for _, p := range outside.paths() {
		if p != "/pay" {
			acted = append(acted, p)
		}
	}
	if len(acted) > 0 {
		outside.mu.Lock()
		t.Errorf("the agent's click acted in a frame of %s, outside its domains: %v", outside.URL, outside.hits)
		outside.mu.Unlock()
	}
}

// Attacks browser_type the same way: the tool focuses the page's input
// (checked in the page's script), then sends one trusted key event per
// character. A hostile page of an allowed host moves the keyboard focus,
// as soon as its input takes it, to a frame of a host outside the
// agent's domains, whose own input takes it: the agent's text (a message,
// an address, a password the person gave it for the allowed site) is
// typed into, and read by, the outside page. The control: the same page
// with a frame of an allowed host.
func TestRedTeamTypingLandsInAnOutsideFrame(t *testing.T) {
	s := needShared(t)
	framePage := func(string) string {
		return `<!doctype html><title>note</title><input id="i"><script>addEventListener('focus', () => i.focus()); ` +
			`i.addEventListener('input', () => fetch('/typed-' + encodeURIComponent(i.value)))</script>`
	}
	outside := newRecorder(t, "127.0.0.2", framePage)
	allowed := newRecorder(t, "127.0.0.3", framePage)
	hostile := newRecorder(t, "127.0.0.1", func(path string) string {
		return fmt.Sprintf(`<!doctype html><title>shop</title><label>Your note <input id="n"></label>`+
			`<iframe id="f" src="%s/note" style="width:200px;height:40px;border:0"></iframe>`+
			`<script>n.addEventListener('focus', () => setTimeout(() => f.focus(), 0))</script>`, toward(path, outside, allowed))
	})
	c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1", "--allow-domain", "127.0.0.3", "--allow-private-networks")
	try := func(pre string) string {
		c.ok(t, "browser_navigate", map[string]any{"url": hostile.URL + pre + "/"})
		time.Sleep(300 * time.Millisecond) // the frame loads
		snap := mustSnap(t, c)
		return resultText(c.call(t, "browser_type", map[string]any{"index": index(t, snap, `textbox "Your note"`), "text": "secret"}))
	}
	res := try("")
	time.Sleep(500 * time.Millisecond)
	t.Logf("type: %s", res)
	if !outside.hit("/note") {
		t.Fatalf("the frame of %s never loaded (%v): this run shows nothing", outside.URL, outside.paths())
	}
	// The focus moved while the tool typed: it says so, and stops.
	if !strings.Contains(res, "lost the keyboard focus") {
		t.Errorf("the tool did not see the focus leave its input: %s", res)
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
