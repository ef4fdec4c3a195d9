package extcdp_test

import (
	"strings"
	"testing"
	"time"
)

// Client A, on a tab the
// person opened and client B debugs too (Debugger on), sets breakpoints of
// the kinds the relay did not note (by URL, on a DOM change, on a fetch,
// on an event listener), then dies. Chrome keeps one Debugger agent per
// attachment, held on by B: the person's page still stops at A's
// breakpoints, for as long as B stays, and B never asked for them.
func TestRedTeamLeftBreakpointsStopThePersonsPage(t *testing.T) {
	for _, tc := range []struct {
		name  string
		probe string
		cmds  [][2]any
		dom   func(a *rawClient, sa string) [2]any
	}{
		{name: "breakpointByUrl",
			probe: "setTimeout(function livetabProbe() {\n window.livetabRan = 1\n}, 0), 1 //# sourceURL=livetab-left-bp.js",
			cmds:  [][2]any{{"Debugger.setBreakpointByUrl", map[string]any{"urlRegex": `livetab-left-bp\.js`, "lineNumber": 1}}}},
		{name: "xhrBreakpoint",
			probe: "setTimeout(function livetabProbe() { fetch('/form?left-xhr').catch(() => {}); window.livetabRan = 1 }, 0), 1",
			cmds:  [][2]any{{"DOMDebugger.setXHRBreakpoint", map[string]any{"url": "left-xhr"}}}},
		{name: "eventListenerBreakpoint",
			probe: "setTimeout(function livetabProbe() { document.body.dispatchEvent(new Event('livetabevent')); window.livetabRan = 1 }, 0), 1",
			cmds:  [][2]any{{"DOMDebugger.setEventListenerBreakpoint", map[string]any{"eventName": "livetabevent"}}}},
		{name: "domBreakpoint",
			probe: "setTimeout(function livetabProbe() { document.body.appendChild(document.createElement('i')); window.livetabRan = 1 }, 0), 1",
			dom: func(a *rawClient, sa string) [2]any {
				root := nodeID(a.must(sa, "DOM.getDocument", map[string]any{}), "root")
				body := nodeID(a.must(sa, "DOM.querySelector", map[string]any{"nodeId": root, "selector": "body"}), "")
				return [2]any{"DOMDebugger.setDOMBreakpoint", map[string]any{"nodeId": body, "type": "subtree-modified"}}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b, sa, sb := sharedTab(t, "/form?left-bp-"+tc.name)
			b.bound = 10 * time.Second
			b.eval(sb, `document.body.addEventListener("livetabevent", () => {}), 1`)
			b.must(sb, "Debugger.enable", nil)
			before := pausedBy(t, b, sb, tc.probe)
			a.must(sa, "Debugger.enable", nil)
			a.must(sa, "DOM.enable", nil)
			for _, c := range tc.cmds {
				a.must(sa, c[0].(string), c[1])
			}
			if tc.dom != nil {
				c := tc.dom(a, sa)
				a.must(sa, c[0].(string), c[1])
			}
			set := pausedBy(t, b, sb, tc.probe)
			if set == before {
				t.Fatalf("A's breakpoint changed nothing (%s)", set)
			}
			a.ws.CloseNow()
			<-a.closed
			time.Sleep(500 * time.Millisecond)
			after := pausedBy(t, b, sb, tc.probe)
			t.Logf("before A: %s; with A's breakpoint: %s; after A left: %s", before, set, after)
			if after != before {
				t.Errorf("after A left, the person's page still stops at A's %s under B's debugger (%s; before A came: %s)", tc.name, after, before)
			}
		})
	}
}

// The same as TestRedTeamLeftBreakpointsStopThePersonsPage, but B never
// turns Debugger on: it only runs scripts on the person's tab, so the
// relay's guard keeps Debugger on there (breakpoints off). A's DOM, fetch
// and event-listener breakpoints are not Debugger breakpoints; after A
// left, does the person's page stop at them with no client to resume it?
func TestRedTeamLeftBreakpointsWithNoDebuggerLeft(t *testing.T) {
	for _, tc := range []struct {
		name, probe string
		cmd         [2]any
	}{
		{"xhrBreakpoint", "setTimeout(function livetabProbe() { fetch('/form?left-xhr2').catch(() => {}); window.livetabRan = 1 }, 0), 1",
			[2]any{"DOMDebugger.setXHRBreakpoint", map[string]any{"url": "left-xhr2"}}},
		{"eventListenerBreakpoint", "setTimeout(function livetabProbe() { document.body.dispatchEvent(new Event('livetabevent2')); window.livetabRan = 1 }, 0), 1",
			[2]any{"DOMDebugger.setEventListenerBreakpoint", map[string]any{"eventName": "livetabevent2"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b, sa, sb := sharedTab(t, "/form?zz-left-nodbg-"+tc.name)
			b.bound = 12 * time.Second
			b.eval(sb, `document.body.addEventListener("livetabevent2", () => {}), 1`)
			a.must(sa, "Debugger.enable", nil)
			a.must(sa, "DOM.enable", nil)
			a.must(sa, tc.cmd[0].(string), tc.cmd[1])
			a.ws.CloseNow()
			<-a.closed
			time.Sleep(500 * time.Millisecond)
			b.must(sb, "Runtime.evaluate", map[string]any{"expression": "window.livetabRan = 0, " + tc.probe})
			start := time.Now()
			_, err := b.call(sb, "Runtime.evaluate", map[string]any{"expression": `new Promise(ok => { const w = () => window.livetabRan ? ok() : setTimeout(w, 10); w() })`, "awaitPromise": true})
			t.Logf("the page's own script after A left: %v after %v", err, time.Since(start).Round(time.Millisecond))
			if err != nil {
				t.Errorf("after A left, the person's page stopped at A's %s with no client's debugger on it: %v", tc.name, err)
			}
			b.mu.Lock()
			for _, e := range b.events {
				if strings.HasPrefix(e.Method, "Debugger.") {
					t.Logf("B heard %s", e.Method)
				}
			}
			b.mu.Unlock()
		})
	}
}
