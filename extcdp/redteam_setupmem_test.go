package extcdp_test

import (
	"runtime"
	"strings"
	"testing"
)

// TestRedTeamSetupHoldsTheRelaysMemory: one client with the token, on a tab
// of its own, adds scripts for new documents
// (Page.addScriptToEvaluateOnNewDocument) of 6 MiB each, well under the
// 100 MiB message bound. The relay keeps every such command of a tab for a
// reattach (reattach.go noteSetup), bounded to 512 commands but not in
// bytes: 512 of them would hold 4 GiB of serve's memory, as long as the
// tab lives, whatever the client's queue and in-flight bounds
// (docs/decisions/2026-11-23-bounded-clients.md). The same holds for
// Runtime.addBinding names. The relay keeps 16 MiB of such params a tab
// and refuses a big one past it, saying what to do (reattach.go setupRoom).
func TestRedTeamSetupHoldsTheRelaysMemory(t *testing.T) {
	a := dialRaw(t)
	_, sa := a.newTab(t, site.URL+"/form?setup-mem")
	heap := func() float64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return float64(ms.HeapAlloc) / (1 << 20)
	}
	before := heap()
	// Few and small enough to keep the test short (each takes ~2 s to
	// reach Chrome); the old code kept all 36 MiB.
	const n, size = 6, 6 << 20
	src := "//" + strings.Repeat("x", size)
	refused := 0
	for i := 0; i < n; i++ {
		_, err := a.call(sa, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": src})
		if err != nil {
			refused++
			if !strings.Contains(err.Error(), "remove earlier scripts") {
				t.Errorf("script %d refused without saying what to do: %v", i, err)
			}
		}
	}
	src = ""
	after := heap()
	t.Logf("relay heap %.1f MiB -> %.1f MiB after %d scripts of %d MiB, %d refused", before, after, n, size>>20, refused)
	if refused == n {
		t.Errorf("every script of %d MiB was refused; the first ones fit in what a tab keeps", size>>20)
	}
	if after-before > 24 {
		t.Errorf("one client's %d scripts for new documents of %d MiB hold %.0f MiB of the relay's memory", n, size>>20, after-before)
	}
}
