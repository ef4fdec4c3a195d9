package extcdp_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// bpstaySendRaw sends a command whose params are the JSON text given, byte
// for byte, and returns its reply.
func bpstaySendRaw(c *rawClient, session, method, params string) (rawMsg, error) {
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan rawMsg, 1)
	c.waiting[id] = ch
	c.mu.Unlock()
	msg := fmt.Sprintf(`{"id":%d,"sessionId":%q,"method":%q,"params":%s}`, id, session, method, params)
	ctx, cancel := context.WithTimeout(context.Background(), c.bound)
	defer cancel()
	if err := c.ws.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		return rawMsg{}, err
	}
	select {
	case m := <-ch:
		return m, nil
	case <-ctx.Done():
		return rawMsg{}, fmt.Errorf("%s: no reply within %v", method, c.bound)
	}
}

func bpstayMustRaw(t *testing.T, c *rawClient, session, method, params string) string {
	t.Helper()
	m, err := bpstaySendRaw(c, session, method, params)
	if err != nil {
		t.Fatal(err)
	}
	if m.Error != nil {
		t.Fatalf("%s %s: %s", method, params, m.Error.Message)
	}
	return string(m.Result)
}

// A and B share the
// person's tab, Debugger on in both. B sets a breakpoint; A sets the SAME
// breakpoint, written otherwise (another JSON spelling, another target
// name that Chrome takes for the same). A leaves: the relay takes back A's
// breakpoint, which is B's too. B, who stays, must still stop at it.
func TestRedTeamLeftBreakpointsOfTheOneWhoStays(t *testing.T) {
	for _, tc := range []struct {
		name  string
		probe string
		setup string // the page's own, before
		b     [2]string
		a     [][2]string
	}{
		{name: "xhrEscaped",
			probe: "setTimeout(function livetabProbe() { fetch('/form?bpstay-xhr').catch(() => {}); window.livetabRan = 1 }, 0), 1",
			b:     [2]string{"DOMDebugger.setXHRBreakpoint", `{"url":"bpstay-xhr"}`},
			a:     [][2]string{{"DOMDebugger.setXHRBreakpoint", `{"url":"bpstay-x\u0068r"}`}}},
		{name: "eventTargetAny",
			probe: "setTimeout(function livetabProbe() { document.body.dispatchEvent(new Event('bpstayevent')); window.livetabRan = 1 }, 0), 1",
			setup: `document.body.addEventListener("bpstayevent", () => {}), 1`,
			b:     [2]string{"DOMDebugger.setEventListenerBreakpoint", `{"eventName":"bpstayevent"}`},
			a:     [][2]string{{"DOMDebugger.setEventListenerBreakpoint", `{"eventName":"bpstayevent","targetName":"*"}`}}},
		{name: "eventEscaped",
			probe: "setTimeout(function livetabProbe() { document.body.dispatchEvent(new Event('bpstayevent2')); window.livetabRan = 1 }, 0), 1",
			setup: `document.body.addEventListener("bpstayevent2", () => {}), 1`,
			b:     [2]string{"DOMDebugger.setEventListenerBreakpoint", `{"eventName":"bpstayevent2"}`},
			a:     [][2]string{{"DOMDebugger.setEventListenerBreakpoint", `{"eventName":"bpstay\u0065vent2"}`}}},
		// Controls: the same breakpoint, spelled the same.
		{name: "xhrSameControl",
			probe: "setTimeout(function livetabProbe() { fetch('/form?bpstay-xhr3').catch(() => {}); window.livetabRan = 1 }, 0), 1",
			b:     [2]string{"DOMDebugger.setXHRBreakpoint", `{"url":"bpstay-xhr3"}`},
			a:     [][2]string{{"DOMDebugger.setXHRBreakpoint", `{"url":"bpstay-xhr3"}`}}},
		{name: "eventSameControl",
			probe: "setTimeout(function livetabProbe() { document.body.dispatchEvent(new Event('bpstayevent3')); window.livetabRan = 1 }, 0), 1",
			setup: `document.body.addEventListener("bpstayevent3", () => {}), 1`,
			b:     [2]string{"DOMDebugger.setEventListenerBreakpoint", `{"eventName":"bpstayevent3"}`},
			a:     [][2]string{{"DOMDebugger.setEventListenerBreakpoint", `{"eventName":"bpstayevent3"}`}}},
		// A sets a breakpoint by URL and takes it back itself; B then sets
		// the same one (Chrome names it the same); A leaves.
		{name: "byUrlRemovedThenB",
			probe: "setTimeout(function livetabProbe() {\n window.livetabRan = 1\n}, 0), 1 //# sourceURL=bpstay-left-bp.js",
			a: [][2]string{
				{"Debugger.setBreakpointByUrl", `{"url":"bpstay-left-bp.js","lineNumber":1}`},
				{"Debugger.removeBreakpoint", `{"breakpointId":"1:1:0:bpstay-left-bp.js"}`},
			},
			b: [2]string{"Debugger.setBreakpointByUrl", `{"url":"bpstay-left-bp.js","lineNumber":1}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b, sa, sb := sharedTab(t, "/form?bpstay-left-bp-"+tc.name)
			b.bound = 10 * time.Second
			if tc.setup != "" {
				b.eval(sb, tc.setup)
			}
			b.must(sb, "Debugger.enable", nil)
			a.must(sa, "Debugger.enable", nil)
			a.must(sa, "DOM.enable", nil)
			before := pausedBy(t, b, sb, tc.probe)
			if tc.name == "byUrlRemovedThenB" {
				res := bpstayMustRaw(t, a, sa, tc.a[0][0], tc.a[0][1])
				t.Logf("A %s -> %s", tc.a[0][0], res)
				id := field([]byte(res), "breakpointId")
				t.Logf("A Debugger.removeBreakpoint -> %s", bpstayMustRaw(t, a, sa, "Debugger.removeBreakpoint", fmt.Sprintf(`{"breakpointId":%q}`, id)))
				t.Logf("B %s -> %s", tc.b[0], bpstayMustRaw(t, b, sb, tc.b[0], tc.b[1]))
			} else {
				t.Logf("B %s -> %s", tc.b[0], bpstayMustRaw(t, b, sb, tc.b[0], tc.b[1]))
				for _, c := range tc.a {
					t.Logf("A %s -> %s", c[0], bpstayMustRaw(t, a, sa, c[0], c[1]))
				}
			}
			set := pausedBy(t, b, sb, tc.probe)
			if set == before {
				t.Fatalf("the breakpoint changed nothing (%s)", set)
			}
			a.ws.CloseNow()
			<-a.closed
			time.Sleep(500 * time.Millisecond)
			after := pausedBy(t, b, sb, tc.probe)
			t.Logf("before: %s; with B's breakpoint: %s; after A left: %s", before, set, after)
			if after != set {
				t.Errorf("after A left, B's own %s breakpoint is gone: the page no longer stops (%s), B never removed it", tc.name, after)
			}
			if !strings.Contains(after, "paused") {
				t.Logf("after: %s", after)
			}
		})
	}
}
