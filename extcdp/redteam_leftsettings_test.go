package extcdp_test

import (
	"strings"
	"testing"
	"time"
)

// TestRedTeamLeftSettingsShowOnNoTab: client A changes, on a tab the person
// opened and client B uses too, whether the page shows scrollbars, whether
// input reaches it, what the person sees drawn over it (grid, flex,
// scroll-snap, container and isolation overlays, a highlighted rectangle or
// node), or how B's debugger stops in it (pause on every exception, no
// pauses, breakpoints off, its scripts blackboxed, async stacks) — then
// dies. Chrome keeps one debugger attachment per tab, held by B's session,
// so each of these but ignored input (taken back already) stayed until B
// left too: all 13 cases failed before the relay took them back.
func TestRedTeamLeftSettingsShowOnNoTab(t *testing.T) {
	const boxes = `document.body.insertAdjacentHTML("afterbegin",
		'<div id="grid" style="display:grid;grid-template-columns:1fr 1fr;width:300px;height:120px;gap:20px"><div>a</div><div>b</div></div>' +
		'<div id="flex" style="display:flex;width:300px;height:60px;gap:30px"><div>c</div><div>d</div></div>' +
		'<div id="snap" style="overflow:scroll;scroll-snap-type:x mandatory;width:300px;height:60px"><div style="width:900px;height:40px;scroll-snap-align:start">e</div></div>' +
		'<div id="cq" style="container-type:inline-size;width:300px;height:60px">f</div>'), 1`
	type domCmd struct {
		method   string
		selector string // the node whose id the params take
		params   func(nodeID int64) map[string]any
	}
	color := map[string]any{"r": 255, "g": 0, "b": 255, "a": 1}
	border := map[string]any{"color": color, "pattern": "solid"}
	debuggerProbe := func(stmt string) string {
		// The page's own script, in a file the blackbox pattern matches.
		return `setTimeout(function livetabProbe() { ` + stmt + `; window.livetabRan = 1 }, 0), 1 //# sourceURL=livetab-left-probe.js`
	}
	for _, tc := range []struct {
		name  string
		probe string   // what the page reads; "shot" for what is drawn, "click" for B's click, "resized:<js>" read at another size, "paused:<js>" for B's debugger
		setup [][2]any // B's, before anything
		cmds  [][2]any // A's
		dom   []domCmd // A's, with a node's id
	}{
		// Chrome lays the page out again without scrollbars only as the
		// view changes size.
		{name: "scrollbarsHidden", probe: "resized:new Promise(ok => requestAnimationFrame(() => requestAnimationFrame(() => ok(String(innerWidth - document.documentElement.clientWidth)))))", cmds: [][2]any{{"Emulation.setScrollbarsHidden", map[string]any{"hidden": true}}}},
		// B's clicks (the person's, through Chrome's own port, are not
		// ignored; in a real window they are).
		{name: "ignoreInput", probe: "click", cmds: [][2]any{{"Input.setIgnoreInputEvents", map[string]any{"ignore": true}}}},
		{name: "pauseOnExceptions", probe: "paused:" + debuggerProbe("try { throw 1 } catch (e) {}"), setup: [][2]any{{"Debugger.enable", nil}},
			cmds: [][2]any{{"Debugger.enable", nil}, {"Debugger.setPauseOnExceptions", map[string]any{"state": "all"}}}},
		// Debugger.setSkipAllPauses and blackboxing are refused on the
		// person's tab: they skip the guard's pause
		// (TestRedTeamGuardTurnedOff, TestRedTeamGuardBlackboxed).
		{name: "breakpointsOff", probe: "paused:" + debuggerProbe("debugger"), setup: [][2]any{{"Debugger.enable", nil}},
			cmds: [][2]any{{"Debugger.enable", nil}, {"Debugger.setBreakpointsActive", map[string]any{"active": false}}}},
		{name: "asyncStacks", probe: "paused:" + debuggerProbe("debugger"), setup: [][2]any{{"Debugger.enable", nil}},
			cmds: [][2]any{{"Debugger.enable", nil}, {"Debugger.setAsyncCallStackDepth", map[string]any{"maxDepth": 32}}}},
		{name: "gridOverlay", probe: "shot", cmds: [][2]any{{"DOM.enable", nil}, {"Overlay.enable", nil}}, dom: []domCmd{{"Overlay.setShowGridOverlays", "#grid", func(id int64) map[string]any {
			return map[string]any{"gridNodeHighlightConfigs": []any{map[string]any{"nodeId": id, "gridHighlightConfig": map[string]any{"gridBorderColor": color, "cellBorderColor": color, "rowGapColor": color, "columnGapColor": color, "showGridExtensionLines": true}}}}
		}}}},
		{name: "flexOverlay", probe: "shot", cmds: [][2]any{{"DOM.enable", nil}, {"Overlay.enable", nil}}, dom: []domCmd{{"Overlay.setShowFlexOverlays", "#flex", func(id int64) map[string]any {
			return map[string]any{"flexNodeHighlightConfigs": []any{map[string]any{"nodeId": id, "flexContainerHighlightConfig": map[string]any{"containerBorder": border, "columnGapSpace": map[string]any{"fillColor": color}}}}}
		}}}},
		{name: "scrollSnapOverlay", probe: "shot", cmds: [][2]any{{"DOM.enable", nil}, {"Overlay.enable", nil}}, dom: []domCmd{{"Overlay.setShowScrollSnapOverlays", "#snap", func(id int64) map[string]any {
			return map[string]any{"scrollSnapHighlightConfigs": []any{map[string]any{"nodeId": id, "scrollSnapContainerHighlightConfig": map[string]any{"snapportBorder": border, "snapAreaBorder": border, "scrollMarginColor": color, "scrollPaddingColor": color}}}}
		}}}},
		{name: "containerQueryOverlay", probe: "shot", cmds: [][2]any{{"DOM.enable", nil}, {"Overlay.enable", nil}}, dom: []domCmd{{"Overlay.setShowContainerQueryOverlays", "#cq", func(id int64) map[string]any {
			return map[string]any{"containerQueryHighlightConfigs": []any{map[string]any{"nodeId": id, "containerQueryContainerHighlightConfig": map[string]any{"containerBorder": border}}}}
		}}}},
		{name: "isolatedOverlay", probe: "shot", cmds: [][2]any{{"DOM.enable", nil}, {"Overlay.enable", nil}}, dom: []domCmd{{"Overlay.setShowIsolatedElements", "#grid", func(id int64) map[string]any {
			return map[string]any{"isolatedElementHighlightConfigs": []any{map[string]any{"nodeId": id, "isolationModeHighlightConfig": map[string]any{"resizerColor": color, "resizerHandleColor": color, "maskColor": color}}}}
		}}}},
		{name: "highlightRect", probe: "shot", cmds: [][2]any{{"DOM.enable", nil}, {"Overlay.enable", nil}, {"Overlay.highlightRect", map[string]any{"x": 10, "y": 10, "width": 300, "height": 200, "color": color}}}},
		{name: "highlightNode", probe: "shot", cmds: [][2]any{{"DOM.enable", nil}, {"Overlay.enable", nil}}, dom: []domCmd{{"Overlay.highlightNode", "#grid", func(id int64) map[string]any {
			return map[string]any{"nodeId": id, "highlightConfig": map[string]any{"contentColor": color, "showInfo": true}}
		}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b, sa, sb := sharedTab(t, "/form?left-settings-"+tc.name)
			b.bound = 10 * time.Second
			b.eval(sb, boxes)
			b.eval(sb, `window.clicks = 0, document.addEventListener("click", () => clicks++), 1`)
			for _, c := range tc.setup {
				b.must(sb, c[0].(string), c[1])
			}
			probe := func() string {
				t.Helper()
				switch {
				case tc.probe == "shot":
					time.Sleep(300 * time.Millisecond) // a frame with what was set
					return field(b.must(sb, "Page.captureScreenshot", map[string]any{"format": "png"}), "data")
				case tc.probe == "click":
					was := b.eval(sb, "String(clicks)")
					for _, typ := range []string{"mousePressed", "mouseReleased"} {
						b.must(sb, "Input.dispatchMouseEvent", map[string]any{"type": typ, "x": 20, "y": 20, "button": "left", "clickCount": 1})
					}
					if b.eval(sb, "String(clicks)") == was {
						return "the page did not see the click"
					}
					return "the page counted the click"
				case strings.HasPrefix(tc.probe, "resized:"):
					b.must(sb, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 600, "height": 400, "deviceScaleFactor": 1, "mobile": false})
					defer b.must(sb, "Emulation.clearDeviceMetricsOverride", nil)
					return b.eval(sb, strings.TrimPrefix(tc.probe, "resized:"))
				case strings.HasPrefix(tc.probe, "paused:"):
					return pausedBy(t, b, sb, strings.TrimPrefix(tc.probe, "paused:"))
				}
				got, err := b.call(sb, "Runtime.evaluate", map[string]any{"expression": tc.probe, "awaitPromise": true, "returnByValue": true})
				if err != nil {
					return "no answer: " + err.Error()
				}
				return string(got)
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
			if set := probe(); set == before {
				t.Fatalf("A's commands changed nothing seen (%.80q): the case shows nothing", set)
			}
			a.ws.CloseNow()
			<-a.closed
			time.Sleep(500 * time.Millisecond)
			if after := probe(); after != before {
				t.Errorf("after A left: %.120q; before A came: %.120q", after, before)
			}
		})
	}
}

// nodeID reads a node id: of the root of a DOM.getDocument result, or of a
// DOM.querySelector result.
func nodeID(v []byte, root string) int64 {
	var r struct {
		NodeID int64 `json:"nodeId"`
		Root   struct {
			NodeID int64 `json:"nodeId"`
		} `json:"root"`
	}
	unmarshal(v, &r)
	if root != "" {
		return r.Root.NodeID
	}
	return r.NodeID
}

// pausedBy runs js (a script of the page's own, started from a timer,
// that sets window.livetabRan when it has run) and reports whether B's
// debugger stopped in it, and with an async stack; a pause is resumed.
func pausedBy(t *testing.T, b *rawClient, sb, js string) string {
	t.Helper()
	for len(b.evs) > 0 {
		<-b.evs
	}
	b.must(sb, "Runtime.evaluate", map[string]any{"expression": "window.livetabRan = 0, " + js})
	ran := make(chan error, 1)
	go func() {
		_, err := b.call(sb, "Runtime.evaluate", map[string]any{"expression": `new Promise(ok => { const w = () => window.livetabRan ? ok() : setTimeout(w, 10); w() })`, "awaitPromise": true})
		ran <- err
	}()
	for {
		select {
		case e := <-b.evs:
			if e.Method != "Debugger.paused" || e.SessionID != sb {
				continue
			}
			b.must(sb, "Debugger.resume", nil)
			if err := <-ran; err != nil {
				t.Fatalf("the page's script after the pause: %v", err)
			}
			if strings.Contains(string(e.Params), `"asyncStackTrace"`) {
				return "paused with an async stack"
			}
			return "paused"
		case err := <-ran:
			if err != nil {
				t.Fatalf("the page's script: %v", err)
			}
			return "ran"
		}
	}
}
