package extcdp_test

import (
	"strings"
	"testing"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
)

// A command the relay answers itself, sent with params of the wrong shape,
// gets Chrome's -32602 instead of running on defaults; absent or empty
// params still mean the defaults.
func TestRelayRefusesParamsOfTheWrongShape(t *testing.T) {
	c := dialRaw(t)
	targets := func() int {
		t.Helper()
		res, err := c.call("", "Target.getTargets", nil)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			TargetInfos []jsonv2.Value `json:"targetInfos"`
		}
		if err := jsonv2.Unmarshal(res, &r, wire.Options); err != nil {
			t.Fatal(err)
		}
		return len(r.TargetInfos)
	}
	before := targets()
	for _, tc := range []struct {
		method string
		params string
	}{
		{"Browser.setDownloadBehavior", `{"behavior":5}`},
		{"Target.disposeBrowserContext", `{"browserContextId":["x"]}`},
		{"Target.setDiscoverTargets", `{"discover":"yes"}`},
		{"Target.setAutoAttach", `{"autoAttach":"yes","waitForDebuggerOnStart":false,"flatten":true}`},
		{"Target.getTargetInfo", `{"targetId":7}`},
		{"Target.createTarget", `{"url":1}`},
		{"Target.attachToTarget", `{"targetId":{},"flatten":true}`},
		{"Target.detachFromTarget", `{"sessionId":false}`},
		{"Target.closeTarget", `{"targetId":[]}`},
		{"Target.activateTarget", `{"targetId":1.5}`},
		{"Livetab.closeTab", `{"targetId":true}`},
	} {
		_, err := c.call("", tc.method, jsonv2.Value(tc.params))
		if err == nil || !strings.Contains(err.Error(), "-32602 Invalid parameters: "+tc.method) {
			t.Errorf("%s(%s): %v, want -32602 Invalid parameters", tc.method, tc.params, err)
		}
	}
	if n := targets(); n != before {
		t.Errorf("%d targets after the refused commands, %d before: one of them ran", n, before)
	}

	// Chrome takes no params and {} alike.
	for _, p := range []any{nil, jsonv2.Value(`{}`)} {
		if _, err := c.call("", "Target.setDiscoverTargets", p); err != nil {
			t.Errorf("setDiscoverTargets with params %s: %v", p, err)
		}
		if _, err := c.call("", "Target.getTargetInfo", p); err != nil {
			t.Errorf("getTargetInfo with params %s: %v", p, err)
		}
	}

	// On a tab's session too.
	res, err := c.call("", "Target.createTarget", map[string]string{"url": "about:blank"})
	if err != nil {
		t.Fatal(err)
	}
	var ct struct {
		TargetID string `json:"targetId"`
	}
	jsonv2.Unmarshal(res, &ct, wire.Options)
	t.Cleanup(func() { c.call("", "Target.closeTarget", map[string]string{"targetId": ct.TargetID}) })
	res, err = c.call("", "Target.attachToTarget", map[string]any{"targetId": ct.TargetID, "flatten": true})
	if err != nil {
		t.Fatal(err)
	}
	var at struct {
		SessionID string `json:"sessionId"`
	}
	jsonv2.Unmarshal(res, &at, wire.Options)
	if _, err := c.call(at.SessionID, "Target.setDiscoverTargets", jsonv2.Value(`{"discover":1}`)); err == nil || !strings.Contains(err.Error(), "-32602") {
		t.Errorf("setDiscoverTargets on a session with a number: %v, want -32602", err)
	}
	if _, err := c.call(at.SessionID, "Target.setDiscoverTargets", nil); err != nil {
		t.Errorf("setDiscoverTargets on a session with no params: %v", err)
	}
}
