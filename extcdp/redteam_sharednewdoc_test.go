package extcdp_test

import (
	"strings"
	"testing"
	"time"
)

// TestRedTeamNewDocumentScriptOfAnother: A adds a script to run on every new
// document of the shared tab; B removes it by its guessed identifier.
func TestRedTeamNewDocumentScriptOfAnother(t *testing.T) {
	a, b, sa, sb := sharedTab(t, "/form?shid-newdoc")
	a.must(sa, "Page.enable", nil)
	res := a.must(sa, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": `window.shidMarkOfA = "present"`})
	id := field(res, "identifier")
	t.Logf("A's identifier %q", id)
	a.must(sa, "Page.reload", nil)
	ok := false
	for i := 0; i < 50 && !ok; i++ {
		time.Sleep(100 * time.Millisecond)
		ok = strings.Contains(a.eval(sa, `String(window.shidMarkOfA)`), "present")
	}
	if !ok {
		t.Fatalf("control: A's script did not run even before B; the test shows nothing")
	}
	for _, g := range []string{id, "1", "2", "3", "4", "5"} {
		got, err := b.call(sb, "Page.removeScriptToEvaluateOnNewDocument", map[string]any{"identifier": g})
		t.Logf("B removes %s: %s %v", g, got, err)
	}
	a.must(sa, "Page.reload", nil)
	var v string
	for i := 0; i < 50; i++ {
		time.Sleep(100 * time.Millisecond)
		v = a.eval(sa, `String(window.shidMarkOfA)`)
		if strings.Contains(v, "present") {
			return
		}
	}
	t.Errorf("after B's removals, A's new-document script did not run: %q", v)
}
