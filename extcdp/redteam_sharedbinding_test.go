package extcdp_test

import (
	"fmt"
	"testing"
	"time"
)

// TestRedTeamBindingOfAnother: A adds a binding and calls it with a
// payload of its own; B, on the same tab with Runtime on, hears A's
// Runtime.bindingCalled.
func TestRedTeamBindingOfAnother(t *testing.T) {
	a, b, sa, sb := sharedTab(t, "/form?shid-binding")
	secret := fmt.Sprintf("shid-bind-secret-%d", time.Now().UnixNano())
	b.must(sb, "Runtime.enable", nil)
	a.must(sa, "Runtime.enable", nil)
	a.must(sa, "Runtime.addBinding", map[string]any{"name": "shidBindOfA"})
	a.must(sa, "Runtime.evaluate", map[string]any{"expression": `shidBindOfA("` + secret + `"), 1`})
	time.Sleep(time.Second)
	t.Logf("A heard: %v", a.hasEvent("Runtime.bindingCalled", secret))
	if b.hasEvent("Runtime.bindingCalled", secret) {
		t.Errorf("B heard A's binding call with A's payload")
	}
	// B removes A's binding.
	b.call(sb, "Runtime.removeBinding", map[string]any{"name": "shidBindOfA"})
	a.must(sa, "Runtime.evaluate", map[string]any{"expression": `shidBindOfA("after-B-removed-` + secret + `"), 1`})
	time.Sleep(time.Second)
	if !a.hasEvent("Runtime.bindingCalled", "after-B-removed-"+secret) {
		t.Errorf("B's Runtime.removeBinding of A's binding stopped A hearing its own binding's calls")
	}
}
