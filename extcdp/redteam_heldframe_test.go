package extcdp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/extcdp"
)

// TestRedTeamHeldFrameOfThePersonsTab: B, on the person's tab that A uses
// too, asks Chrome to hold each new frame until a debugger lets it run
// (waitForDebuggerOnStart), and stays, never letting one run. A cross-site
// frame the page then adds must still load: the person's page is not held
// by a program past the bound.
func TestRedTeamHeldFrameOfThePersonsTab(t *testing.T) {
	defer extcdp.SetSyncScriptBound(3 * time.Second)()
	a, b, sa, sb := sharedTab(t, "/form?held-frame")
	b.must(sb, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true})
	a.bound = 20 * time.Second
	got, err := addCrossFrame(a, sa)
	if err != nil || !strings.Contains(string(got), "loaded") {
		t.Fatalf("a frame of the person's tab while B holds it: %s %v", got, err)
	}
	// B still hears of the frame, and its session works.
	if !b.hasEvent("Target.attachedToTarget", `"iframe"`) {
		t.Error("B was not told of the frame it auto-attached")
	}
}
