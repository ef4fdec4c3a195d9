package extcdp_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestRedTeamLeftSettingsOutsideTheList: client A, on a tab the person
// opened and client B uses too, sends a command that changes how the
// person's page looks or works and that is not among the relay's undoings
// (extcdp/leftstate.go), then dies. B stays, so Chrome keeps the one
// debugger attachment and A's setting with it: the person's page must read
// (or show) after A left what it read before A came.
func TestRedTeamLeftSettingsOutsideTheList(t *testing.T) {
	const setup = `document.body.insertAdjacentHTML("afterbegin",
		'<style>#lm{color:rgb(0,0,255)} #lm:hover{color:rgb(255,0,0)} #lm:focus-within{outline:3px solid red}</style>' +
		'<div id="lm" style="width:300px;height:40px">hover me</div>' +
		'<div id="lwh" style="width:300px;height:80px;background:#eee">wheel</div>'),
		document.getElementById("lwh").addEventListener("wheel", e => e.preventDefault(), {passive: false}),
		document.getElementById("lwh").addEventListener("touchstart", e => {}, {passive: false}), 1`
	n := 0
	webp := func() string {
		// A fresh URL each time, so that no cached image answers.
		n++
		return fmt.Sprintf(`new Promise(ok => { const i = new Image(); i.onload = () => ok("load " + i.naturalWidth); i.onerror = () => ok("error"); i.src = "data:image/webp;zz=%d;base64,UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==" })`, n)
	}
	type domCmd struct {
		method   string
		selector string
		params   func(nodeID int64) map[string]any
	}
	for _, tc := range []struct {
		name  string
		probe func() string // page JS; "" for a screenshot
		cmds  [][2]any
		dom   []domCmd
	}{
		// The person's menu stays open (:hover forced) on their page.
		{name: "forcedHover", probe: func() string { return `getComputedStyle(document.getElementById("lm")).color` },
			cmds: [][2]any{{"DOM.enable", nil}, {"CSS.enable", nil}},
			dom: []domCmd{{"CSS.forcePseudoState", "#lm", func(id int64) map[string]any {
				return map[string]any{"nodeId": id, "forcedPseudoClasses": []string{"hover"}}
			}}}},
		// The person's page shows no webp image.
		{name: "webpOff", probe: webp, cmds: [][2]any{{"Emulation.setDisabledImageTypes", map[string]any{"imageTypes": []string{"webp"}}}}},
		// Drawn over the person's page.
		{name: "scrollBottleneck", cmds: [][2]any{{"DOM.enable", nil}, {"Overlay.enable", nil}, {"Overlay.setShowScrollBottleneckRects", map[string]any{"show": true}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b, sa, sb := sharedTab(t, "/form?left-list-"+tc.name)
			b.bound = 15 * time.Second
			b.eval(sb, setup)
			probe := func() string {
				t.Helper()
				if tc.probe == nil {
					time.Sleep(400 * time.Millisecond)
					return field(b.must(sb, "Page.captureScreenshot", map[string]any{"format": "png"}), "data")
				}
				got, err := b.call(sb, "Runtime.evaluate", map[string]any{"expression": tc.probe(), "awaitPromise": true, "returnByValue": true})
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
			set := probe()
			if set == before {
				t.Fatalf("A's commands changed nothing seen (%.80q): the case shows nothing", set)
			}
			t.Logf("before %.100q, with A's setting %.100q", before, set)
			a.ws.CloseNow()
			<-a.closed
			time.Sleep(time.Second)
			after := probe()
			if tc.probe == nil && after == set {
				t.Logf("the screenshot after A left is the one with A's setting, byte for byte")
			}
			if after != before {
				if strings.HasPrefix(after, "no answer") {
					t.Fatalf("the person's tab after A left: %s", after)
				}
				t.Errorf("after A left: %.120q; before A came: %.120q", after, before)
			}
		})
	}
}
