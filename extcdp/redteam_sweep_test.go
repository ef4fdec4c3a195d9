package extcdp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/internal/browsertest"
)

// TestRedTeamSweptInputsCrashNothing: inputs found by sending every
// command of cdproto with edge values, through livetab and through Chrome's
// own port alike (docs/decisions/2026-11-23-chrome-debugger-inputs-emulated-or-refused.md,
// update of 2026-11-29): before the relay refused them, the first two took
// the whole browser down, the third crashed the tab's renderer and the last
// two were never answered. Each is refused at once, and the person's
// browser, the extension and another tab are still there.
func TestRedTeamSweptInputsCrashNothing(t *testing.T) {
	if env == nil {
		browsertest.RequireChromium(t)
	}
	e := startCrashEnv(t)
	c := dialCDP(t, e.url)
	c.bound = 15 * time.Second
	tid, sid := c.newTab(t, site.URL+"/form?swept")
	defer c.send("", "Target.closeTarget", map[string]any{"targetId": tid})
	for _, tc := range []struct {
		method string
		params map[string]any
	}{
		{"Input.imeSetComposition", map[string]any{"text": "\u0000", "selectionStart": -1, "selectionEnd": -1, "replacementStart": -1, "replacementEnd": -1}},
		{"Input.imeSetComposition", map[string]any{"text": "a", "selectionStart": 0, "selectionEnd": 0, "replacementStart": -1}},
		{"Input.imeSetComposition", map[string]any{"text": "a", "selectionStart": 0, "selectionEnd": 0, "replacementStart": 0, "replacementEnd": -1}},
		{"Storage.overrideQuotaForOrigin", map[string]any{"origin": site.URL, "quotaSize": 1e308}},
		{"Storage.overrideQuotaForOrigin", map[string]any{"origin": site.URL, "quotaSize": -1}},
		{"DOM.setOuterHTML", map[string]any{"nodeId": 0, "outerHTML": "<p>x</p>"}},
		{"Input.synthesizePinchGesture", map[string]any{"x": 10, "y": 10, "scaleFactor": 0}},
		{"Input.synthesizePinchGesture", map[string]any{"x": 10, "y": 10, "scaleFactor": 2, "relativeSpeed": 0}},
		{"Page.waitForDebugger", map[string]any{}},
	} {
		m, err := c.send(sid, tc.method, tc.params)
		if err != nil {
			t.Errorf("%s %v: %v, want a refusal at once", tc.method, tc.params, err)
		} else if m.Error == nil || !strings.Contains(m.Error.Message, "livetab refuses") {
			t.Errorf("%s %v answered %+v, want livetab's refusal", tc.method, tc.params, m.Error)
		}
		e.alive(t)
		if v, err := c.evalJSON(sid, "6*7"); err != nil || v != "42" {
			t.Errorf("the tab after %s: %q %v", tc.method, v, err)
		}
	}
	// What a program means by them still goes through.
	c.must(sid, "Input.imeSetComposition", map[string]any{"text": "a", "selectionStart": 0, "selectionEnd": 1})
	c.must(sid, "Storage.overrideQuotaForOrigin", map[string]any{"origin": site.URL, "quotaSize": 1 << 30})
	c.must(sid, "Storage.overrideQuotaForOrigin", map[string]any{"origin": site.URL})
	e.alive(t)
}
