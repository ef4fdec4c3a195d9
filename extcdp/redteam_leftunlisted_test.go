package extcdp_test

import (
	"strings"
	"testing"
	"time"
)

// TestRedTeamLeftUnlistedSettings: client A, on a tab the person opened
// and client B uses too, sends a command that chrome.debugger takes and
// that extcdp/leftstate.go does not take back, then dies. B stays, so
// Chrome keeps the one attachment and A's setting with it: the person's
// page must read after A left what it read before A came.
func TestRedTeamLeftUnlistedSettings(t *testing.T) {
	const setup = `document.body.insertAdjacentHTML("afterbegin",
		'<style>#ss{opacity:1;transition:opacity 1ms} @starting-style{#ss{opacity:0}}</style>' +
		'<div id="ss" style="width:300px;height:30px;background:#08f">starting style</div>' +
		'<div id="pop" popover="auto">a popover</div>' +
		'<button id="inv" interestfor="pop2">interest</button><div id="pop2" popover="hint">hint</div>'), 1`
	type domCmd struct {
		method   string
		selector string
		params   func(nodeID int64) map[string]any
	}
	for _, tc := range []struct {
		name  string
		probe string
		setup [][2]any // B's, before A comes
		cmds  [][2]any
		dom   []domCmd
	}{
		// The person's element held in its starting style (here: not
		// shown), B's CSS agent on too (its styles panel): A's CSS.enable is
		// taken back by B's, which leaves A's forced state on. (With B's CSS
		// off, CSS.disable clears it.)
		{name: "forceStartingStyleBesideB", probe: `new Promise(ok => requestAnimationFrame(() => requestAnimationFrame(() => ok(getComputedStyle(document.getElementById("ss")).opacity))))`,
			setup: [][2]any{{"DOM.enable", nil}, {"CSS.enable", nil}},
			cmds:  [][2]any{{"DOM.enable", nil}, {"CSS.enable", nil}},
			dom: []domCmd{{"CSS.forceStartingStyle", "#ss", func(id int64) map[string]any {
				return map[string]any{"nodeId": id, "forced": true}
			}}}},
		// A popover held open over the person's page, which the page's own
		// hidePopover() no longer closes.
		{name: "forceShowPopover", probe: `(document.getElementById("pop").hidePopover(), String(document.getElementById("pop").matches(":popover-open")))`,
			cmds: [][2]any{{"DOM.enable", nil}},
			dom: []domCmd{{"DOM.forceShowPopover", "#pop", func(id int64) map[string]any {
				return map[string]any{"nodeId": id, "enable": true}
			}}}},
		{name: "forceShowInterest", probe: `String(document.getElementById("pop2").matches(":popover-open"))`,
			cmds: [][2]any{{"DOM.enable", nil}},
			dom: []domCmd{{"DOM.forceShowInterest", "#inv", func(id int64) map[string]any {
				return map[string]any{"nodeId": id, "enable": true}
			}}}},
		// What the person's page reads of the device. (Emulation.addScreen
		// outlives even the detach: TestRedTeamAddedScreenReachesThePersonsTab.)
		{name: "virtualKeyboard", probe: `navigator.virtualKeyboard ? (navigator.virtualKeyboard.overlaysContent = true, new Promise(ok => setTimeout(() => ok(JSON.stringify(navigator.virtualKeyboard.boundingRect)), 300))) : "none"`,
			cmds: [][2]any{{"Emulation.setVirtualKeyboardGeometryOverride", map[string]any{"keyboardRect": map[string]any{"x": 0, "y": 100, "width": 300, "height": 200}}}}},
		{name: "cpuPerformance", probe: `String(navigator.cpuPerformance)`,
			cmds: [][2]any{{"Emulation.setCPUPerformanceOverride", map[string]any{"performanceTier": "low"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b, sa, sb := sharedTab(t, "/form?left-unlisted-"+tc.name)
			b.bound = 15 * time.Second
			b.eval(sb, setup)
			probe := func() string {
				t.Helper()
				got, err := b.call(sb, "Runtime.evaluate", map[string]any{"expression": tc.probe, "awaitPromise": true, "returnByValue": true})
				if err != nil {
					return "no answer: " + err.Error()
				}
				return string(got)
			}
			for _, c := range tc.setup {
				b.must(sb, c[0].(string), c[1])
			}
			before := probe()
			for _, c := range tc.cmds {
				a.must(sa, c[0].(string), c[1])
			}
			for _, d := range tc.dom {
				root := nodeID(a.must(sa, "DOM.getDocument", map[string]any{}), "root")
				node := nodeID(a.must(sa, "DOM.querySelector", map[string]any{"nodeId": root, "selector": d.selector}), "")
				a.must(sa, d.method, d.params(node))
			}
			set := probe()
			if set == before {
				t.Fatalf("A's commands changed nothing seen (%.100q): the case shows nothing", set)
			}
			t.Logf("before %.100q, with A's setting %.100q", before, set)
			a.ws.CloseNow()
			<-a.closed
			time.Sleep(time.Second)
			if after := probe(); after != before {
				if strings.HasPrefix(after, "no answer") {
					t.Fatalf("the person's tab after A left: %s", after)
				}
				t.Errorf("after A left: %.120q; before A came: %.120q", after, before)
			}
		})
	}
}
