package extcdp_test

import (
	"testing"
)

// TestRedTeamBreakpointOfAnother: A sets a breakpoint by URL; B
// removes it by its id (Chrome's ids are predictable: "1:line:col:url").
func TestRedTeamBreakpointOfAnother(t *testing.T) {
	a, b, sa, sb := sharedTab(t, "/form?shid-bp")
	a.must(sa, "Debugger.enable", nil)
	t.Cleanup(func() { a.call(sa, "Debugger.disable", nil) })
	res := a.must(sa, "Debugger.setBreakpointByUrl", map[string]any{"lineNumber": 3, "url": "http://shid.invalid/x.js"})
	id := field(res, "breakpointId")
	t.Logf("A's breakpoint %q", id)
	if _, err := a.call(sa, "Debugger.setBreakpointByUrl", map[string]any{"lineNumber": 3, "url": "http://shid.invalid/x.js"}); err == nil {
		t.Fatalf("control: a duplicate breakpoint did not fail; the test shows nothing")
	}
	b.must(sb, "Debugger.enable", nil)
	t.Cleanup(func() { b.call(sb, "Debugger.disable", nil) })
	got, err := b.call(sb, "Debugger.removeBreakpoint", map[string]any{"breakpointId": id})
	t.Logf("B's removal: %s %v", got, err)
	// A's breakpoint still there: setting it again must fail as a duplicate.
	if _, err := a.call(sa, "Debugger.setBreakpointByUrl", map[string]any{"lineNumber": 3, "url": "http://shid.invalid/x.js"}); err == nil {
		t.Errorf("B removed A's breakpoint %s (A could set it again)", id)
	}
}
