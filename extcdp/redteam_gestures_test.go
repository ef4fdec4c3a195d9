package extcdp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/internal/browsertest"
)

// Chrome synthesizes a gesture in the browser process, and answers it when
// the gesture is over. Through the extension, a tap gesture of a billion
// taps left the browser answering no tab (another client's tab among
// them) and the extension away; a scroll or pinch gesture that takes days
// kept the tab's input busy and its command unanswered for as long. The
// relay refuses gestures past what a person's hand does, at once and with
// an error that says the bound, and the browser answers on.
func TestRedTeamGesturesWedgeNoBrowser(t *testing.T) {
	if env == nil {
		browsertest.RequireChromium(t)
	}
	// One browser, started again only when an attack took it down.
	e := startCrashEnv(t)
	for _, tc := range []struct {
		name   string
		method string
		params map[string]any
	}{
		{"taps", "Input.synthesizeTapGesture", map[string]any{"x": 10, "y": 10, "tapCount": 1000000000, "duration": 0}},
		{"longTap", "Input.synthesizeTapGesture", map[string]any{"x": 10, "y": 10, "tapCount": 1, "duration": 1000000000}},
		{"scrollRepeat", "Input.synthesizeScrollGesture", map[string]any{"x": 10, "y": 10, "yDistance": -1000, "repeatCount": 1000000000, "repeatDelayMs": 0}},
		{"scrollFar", "Input.synthesizeScrollGesture", map[string]any{"x": 10, "y": 10, "yDistance": -1e12, "speed": 800}},
		{"pinch", "Input.synthesizePinchGesture", map[string]any{"x": 10, "y": 10, "scaleFactor": 1e9, "relativeSpeed": 1}},
		// Each repeat takes frames of its own, however short its way:
		// these went unanswered past 20 s through both doors.
		{"scrollRepeatStill", "Input.synthesizeScrollGesture", map[string]any{"x": 10, "y": 10, "yDistance": 0, "repeatCount": 1000000000, "repeatDelayMs": 0}},
		{"scrollRepeatFast", "Input.synthesizeScrollGesture", map[string]any{"x": 10, "y": 10, "yDistance": -1, "speed": 1000000000, "repeatCount": 1000000000, "repeatDelayMs": 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.ensure(t)
			c := dialCDP(t, e.url)
			c.bound = 15 * time.Second
			tid, sid := c.newTab(t, site.URL+"/form?gesture-"+tc.name)
			defer c.send("", "Target.closeTarget", map[string]any{"targetId": tid})
			m, err := c.send(sid, tc.method, tc.params)
			if err != nil {
				t.Errorf("%s: %v, want a refusal at once", tc.method, err)
			} else if m.Error == nil || !strings.Contains(m.Error.Message, "at most") {
				t.Errorf("%s answered %+v, want a refusal saying the bound", tc.method, m.Error)
			}
			time.Sleep(time.Second)
			e.alive(t)
			if v, err := c.evalJSON(sid, "6*7"); err != nil || v != "42" {
				t.Errorf("the tab after the gesture: %q %v", v, err)
			}
		})
	}
	// A gesture a test or a person's hand makes still runs.
	e.ensure(t)
	c := dialCDP(t, e.url)
	c.bound = 15 * time.Second
	_, sid := c.newTab(t, site.URL+"/form?gesture-ok")
	c.must(sid, "Input.synthesizeTapGesture", map[string]any{"x": 10, "y": 10, "tapCount": 2})
	c.must(sid, "Input.synthesizeScrollGesture", map[string]any{"x": 10, "y": 10, "yDistance": -200, "repeatCount": 2, "repeatDelayMs": 10, "speed": 2000})
}

// A mouse or touch event at a point far past any screen (10^308 px) was
// never answered, through chrome.debugger and Chrome's own port alike, and
// the tab took no mouse input again: a click at (10, 10) after it had no
// answer either. At 10^10 px Chrome answered; a gesture there it refuses
// itself ("Position out of bounds"). The relay refuses a point
// past 10^9 px, and the tab's clicks are answered on.
func TestRedTeamInputFarAwayWedgesNoTab(t *testing.T) {
	if env == nil {
		browsertest.RequireChromium(t)
	}
	c := dialRaw(t)
	c.bound = 8 * time.Second
	tid, sid := c.newTab(t, site.URL+"/form?input-far")
	defer c.send("", "Target.closeTarget", map[string]any{"targetId": tid})
	for _, tc := range []struct {
		method string
		params map[string]any
	}{
		{"Input.dispatchMouseEvent", map[string]any{"type": "mouseMoved", "x": 1e308, "y": 1e308}},
		{"Input.dispatchMouseEvent", map[string]any{"type": "mousePressed", "x": 10, "y": -1e300, "button": "left", "clickCount": 1}},
		{"Input.dispatchTouchEvent", map[string]any{"type": "touchStart", "touchPoints": []any{map[string]any{"x": 1e308, "y": 1e308}}}},
	} {
		m, err := c.send(sid, tc.method, tc.params)
		if err != nil {
			t.Errorf("%s %v: %v, want a refusal at once", tc.method, tc.params, err)
		} else if m.Error == nil || !strings.Contains(m.Error.Message, "at most") {
			t.Errorf("%s %v answered %+v, want a refusal saying the bound", tc.method, tc.params, m.Error)
		}
	}
	for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
		if _, err := c.call(sid, "Input.dispatchMouseEvent", map[string]any{"type": typ, "x": 10, "y": 10, "button": "left", "clickCount": 1}); err != nil {
			t.Errorf("a click after: %v", err)
		}
	}
	// Far but finite points are Chrome's to answer.
	c.must(sid, "Input.dispatchMouseEvent", map[string]any{"type": "mouseMoved", "x": 1e8, "y": -1e8})
}

// Typing 50 MB with Input.insertText or Input.imeSetComposition into a
// focused field kept the client's tab from answering anything for over a
// minute, through chrome.debugger and Chrome's own port alike; a 50 MB key
// event held the extension, and another tab, for seconds before Chrome
// refused it. The relay refuses a text past 1 MiB before it leaves, saying
// to set such a value from script, and the tab answers on.
func TestRedTeamHugeTextWedgesNoTab(t *testing.T) {
	if env == nil {
		browsertest.RequireChromium(t)
	}
	e := startCrashEnv(t)
	c := dialCDP(t, e.url)
	c.bound = 15 * time.Second
	tid, sid := c.newTab(t, site.URL+"/form?huge-text")
	defer c.send("", "Target.closeTarget", map[string]any{"targetId": tid})
	c.must(sid, "Emulation.setFocusEmulationEnabled", map[string]any{"enabled": true})
	if _, err := c.evalJSON(sid, "document.querySelector('input').focus()"); err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("x", 50<<20)
	for _, tc := range []struct {
		method string
		params map[string]any
	}{
		{"Input.insertText", map[string]any{"text": text}},
		{"Input.imeSetComposition", map[string]any{"text": text, "selectionStart": 0, "selectionEnd": 0}},
		{"Input.dispatchKeyEvent", map[string]any{"type": "keyDown", "text": text}},
	} {
		m, err := c.send(sid, tc.method, tc.params)
		if err != nil {
			t.Errorf("%s of 50 MB: %v, want a refusal at once", tc.method, err)
		} else if m.Error == nil || !strings.Contains(m.Error.Message, "at most") {
			t.Errorf("%s of 50 MB answered %+v, want a refusal saying the bound", tc.method, m.Error)
		}
		e.alive(t)
		if v, err := c.evalJSON(sid, "6*7"); err != nil || v != "42" {
			t.Errorf("the tab after %s: %q %v", tc.method, v, err)
		}
	}
	// A text a form takes is typed (into the input focused again: on a
	// loaded machine it once had lost the focus by then, and took nothing).
	if _, err := c.evalJSON(sid, "document.querySelector('input').focus()"); err != nil {
		t.Fatal(err)
	}
	c.must(sid, "Input.insertText", map[string]any{"text": strings.Repeat("y", 1000)})
	if v, err := c.evalJSON(sid, "document.querySelector('input').value.length"); err != nil || v != "1000" {
		t.Errorf("the input after a 1000-character text: %q %v", v, err)
	}
}
