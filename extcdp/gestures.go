package extcdp

import (
	"fmt"
	"math"
	"strings"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
)

// Chrome synthesizes Input.synthesize*Gesture in the browser process and
// answers when the gesture is over. Measured through the extension
// (TestRedTeamGesturesWedgeNoBrowser): a tap gesture of a billion taps left
// the browser answering no tab and the extension away; a tap held, a
// scroll or a pinch that would take days kept its tab's input busy with no
// answer. The relay refuses a gesture past what a hand does, on every tab.
const (
	// maxGestureTaps is the most taps of one tap gesture.
	maxGestureTaps = 10
	// maxPinchScale bounds a pinch's scale factor both ways; a page zooms
	// at most 5× by pinching.
	maxPinchScale = 20
	// maxGestureSeconds bounds how long a gesture may take, as Chrome's
	// defaults compute it.
	maxGestureSeconds = 60.0
	// gestureFrame is the least time one repeat of a scroll gesture takes
	// however short its way: a frame. A billion repeats of no distance
	// went unanswered through both doors.
	gestureFrame = 1.0 / 60
	// maxInputCoordinate bounds an input event's point, in CSS pixels
	// either way: Chrome emulates viewports up to 10^7 px. A mouse or touch
	// event at 10^308 px was never answered and left the tab taking no
	// mouse input; at 10^10 px Chrome answered.
	maxInputCoordinate = 1e9
	// maxInputText bounds the text of one input command, in bytes. Typing
	// 50 MB with Input.insertText or imeSetComposition into a focused field
	// kept the tab from answering anything for over a minute (1 MB took
	// 7–11 s); a 50 MB key event held the extension, and other tabs, for
	// seconds before Chrome refused it.
	maxInputText = 1 << 20
)

// guardGesture reports whether it refused m, a gesture too long or too
// many.
func (c *Client) guardGesture(m *cdproto.Message) bool {
	// Chrome's defaults for what a client leaves out.
	p := struct {
		TapCount      float64 `json:"tapCount"`
		Duration      float64 `json:"duration"`
		XDistance     float64 `json:"xDistance"`
		YDistance     float64 `json:"yDistance"`
		XOverscroll   float64 `json:"xOverscroll"`
		YOverscroll   float64 `json:"yOverscroll"`
		Speed         float64 `json:"speed"`
		RepeatCount   float64 `json:"repeatCount"`
		RepeatDelayMs float64 `json:"repeatDelayMs"`
		ScaleFactor   float64 `json:"scaleFactor"`
		RelativeSpeed float64 `json:"relativeSpeed"`
	}{TapCount: 1, Duration: 50, Speed: 800, RepeatDelayMs: 250, ScaleFactor: 1, RelativeSpeed: 800}
	if len(m.Params) > 0 {
		if err := jsonv2.Unmarshal(m.Params, &p, wire.Options); err != nil {
			c.fail(m.ID, m.SessionID, -32602, fmt.Sprintf("livetab: invalid %s params: %v", m.Method, err))
			return true
		}
	}
	var seconds float64
	switch m.Method {
	case cdproto.CommandInputSynthesizeTapGesture:
		if p.TapCount > maxGestureTaps {
			c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab refuses a tap gesture of %g taps: at most %d, as Chrome synthesizes them in the browser process, which answers no tab meanwhile; send several", p.TapCount, maxGestureTaps))
			return true
		}
		seconds = math.Max(p.TapCount, 1) * p.Duration / 1000
	case cdproto.CommandInputSynthesizeScrollGesture:
		if p.Speed <= 0 {
			return false // Chrome refuses it
		}
		dist := math.Abs(p.XDistance) + math.Abs(p.YDistance) + math.Abs(p.XOverscroll) + math.Abs(p.YOverscroll)
		seconds = (dist/p.Speed+gestureFrame)*(p.RepeatCount+1) + p.RepeatDelayMs/1000*p.RepeatCount
	case cdproto.CommandInputSynthesizePinchGesture:
		if !(p.ScaleFactor > 0 && p.RelativeSpeed > 0) {
			// Measured: Chrome takes a pinch of scale or speed 0 and never
			// answers it, through the extension or its own port.
			c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab refuses a pinch of scale factor %g at relative speed %g: both must be above 0 (Chrome never answers such a pinch)", p.ScaleFactor, p.RelativeSpeed))
			return true
		}
		if p.ScaleFactor > maxPinchScale || p.ScaleFactor < 1.0/maxPinchScale {
			c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab refuses a pinch by %g: at most %d× either way, as the tab takes no other input while the pointers travel", p.ScaleFactor, maxPinchScale))
			return true
		}
		// The pointers travel about 100 px per scale step.
		seconds = math.Max(p.ScaleFactor, 1/p.ScaleFactor) * 100 / p.RelativeSpeed
	default:
		return false
	}
	if seconds > maxGestureSeconds || math.IsNaN(seconds) {
		c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab refuses %s: it would take about %.3g s, and at most %g s are allowed, as the tab takes no other input meanwhile and the command is answered only at its end; make it shorter or faster", m.Method, seconds, maxGestureSeconds))
		return true
	}
	return false
}

// guardPoint reports whether it refused m, an input event at a point far
// past any screen.
func (c *Client) guardPoint(m *cdproto.Message) bool {
	type point struct {
		X float64 `json:"x"`
		Y float64 `json:"y"`
	}
	var p struct {
		point
		TouchPoints []point `json:"touchPoints"`
	}
	switch m.Method {
	case cdproto.CommandInputDispatchMouseEvent, cdproto.CommandInputDispatchTouchEvent,
		cdproto.CommandInputDispatchDragEvent, cdproto.CommandInputEmulateTouchFromMouseEvent:
	default:
		return false
	}
	if len(m.Params) > 0 {
		if err := jsonv2.Unmarshal(m.Params, &p, wire.Options); err != nil {
			c.fail(m.ID, m.SessionID, -32602, fmt.Sprintf("livetab: invalid %s params: %v", m.Method, err))
			return true
		}
	}
	for _, pt := range append(p.TouchPoints, p.point) {
		if !(math.Abs(pt.X) <= maxInputCoordinate && math.Abs(pt.Y) <= maxInputCoordinate) {
			c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab refuses %s at (%g, %g): at most %g px either way, as Chrome never answered an event that far and the tab then took no mouse input", m.Method, pt.X, pt.Y, maxInputCoordinate))
			return true
		}
	}
	return false
}

// guardText reports whether it refused m, an input command with a text
// longer than maxInputText.
func (c *Client) guardText(m *cdproto.Message) bool {
	switch m.Method {
	case cdproto.CommandInputInsertText, cdproto.CommandInputImeSetComposition, cdproto.CommandInputDispatchKeyEvent:
	default:
		return false
	}
	if len(m.Params) <= maxInputText {
		return false
	}
	var p struct {
		Text           string `json:"text"`
		UnmodifiedText string `json:"unmodifiedText"`
		Key            string `json:"key"`
		Code           string `json:"code"`
		KeyIdentifier  string `json:"keyIdentifier"`
	}
	if err := jsonv2.Unmarshal(m.Params, &p, wire.Options); err != nil {
		c.fail(m.ID, m.SessionID, -32602, fmt.Sprintf("livetab: invalid %s params: %v", m.Method, err))
		return true
	}
	if n := max(len(p.Text), len(p.UnmodifiedText), len(p.Key), len(p.Code), len(p.KeyIdentifier)); n > maxInputText {
		c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab refuses %s with a text of %d bytes: at most %d, as typing more kept the tab from answering anything for minutes; set a long value from script (Runtime.callFunctionOn with this.value = …), or type it in parts", m.Method, n, maxInputText))
		return true
	}
	return false
}

// guardPaste refuses a paste by a client held to its domains: Chrome
// pastes the system clipboard for a debugger's key event without asking,
// so an editing command "paste" or a Ctrl+V in a page of the client's own
// read back what the person had copied on any site, their bank's too (red
// team, 3 of 3). A client with no domains may read every tab already.
// Linux's middle-click paste of the selection is not looked at.
func (c *Client) guardPaste(m *cdproto.Message) bool {
	if m.Method != cdproto.CommandInputDispatchKeyEvent || c.heldDomains() == nil {
		return false
	}
	var p struct {
		Type      string   `json:"type"`
		Key       string   `json:"key"`
		Code      string   `json:"code"`
		VK        int64    `json:"windowsVirtualKeyCode"`
		NativeVK  int64    `json:"nativeVirtualKeyCode"`
		Modifiers int64    `json:"modifiers"`
		Commands  []string `json:"commands"`
	}
	if err := jsonv2.Unmarshal(m.Params, &p, wire.Options); err != nil {
		c.fail(m.ID, m.SessionID, -32602, fmt.Sprintf("livetab: invalid %s params: %v", m.Method, err))
		return true
	}
	if !isPaste(p.Type, p.Key, p.Code, p.VK, p.NativeVK, p.Modifiers, p.Commands) {
		return false
	}
	c.fail(m.ID, m.SessionID, -32000, "livetab refuses a paste (an editing command \"paste\", Ctrl+V, Cmd+V or Shift+Insert) by a client held to its domains: Chrome would paste the person's clipboard, which holds what they copied on any site; type the text with Input.insertText instead")
	return true
}

// isPaste says whether a key event pastes: its editing commands name a
// paste, or it is a paste's shortcut pressed (Ctrl+V and Ctrl+Shift+V,
// Cmd+V, Shift+Insert) — the page's own key bindings turn the last into a
// paste.
func isPaste(typ, key, code string, vk, nativeVK, modifiers int64, commands []string) bool {
	for _, cmd := range commands {
		if strings.HasPrefix(strings.ToLower(cmd), "paste") {
			return true
		}
	}
	if typ == "keyUp" {
		return false
	}
	const (
		alt, ctrl, meta, shift = 1, 2, 4, 8
	)
	v := strings.EqualFold(key, "v") || code == "KeyV" || vk == 'V' || nativeVK == 'V'
	insert := key == "Insert" || code == "Insert" || vk == 0x2D || nativeVK == 0x2D
	switch {
	case v && modifiers&(ctrl|meta) != 0:
		return true
	case insert && modifiers&shift != 0 && modifiers&(ctrl|alt|meta) == 0:
		return true
	}
	return false
}
