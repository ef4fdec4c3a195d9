package extcdp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamKeptTabsPopupIsNotShared: a program opens a tab, signs in
// there and gives it to the person (Livetab.keepTab: "the person's now",
// listed without Created, seen by other programs "as any of the person's
// tabs"), then leaves. The person goes on in it and opens a window from it
// (a compose window with a draft). mayUse walks the popup's openers to a
// tab livetab created and stops at the kept tab, whose extension report
// still says created: a program held to shared tabs attaches to the
// person's window (and to the kept tab), though neither was shared.
func TestRedTeamKeptTabsPopupIsNotShared(t *testing.T) {
	maker := dialRaw(t)
	kept := field(maker.must("", "Target.createTarget", map[string]any{"url": site.URL + "/form?zzq-kept"}), "targetId")
	closeUserTab(t, kept)
	maker.must("", livetabcdp.CommandKeepTab, map[string]any{"targetId": kept})
	maker.ws.CloseNow()
	time.Sleep(500 * time.Millisecond)

	a := dialRaw(t)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"sharedOnly": true, "guardsLoads": true, "domains": []string{"127.0.0.1"}})
	// The program may not use the kept tab: the person did not share it.
	if r, err := a.call("", "Target.attachToTarget", map[string]any{"targetId": kept, "flatten": true}); err == nil {
		t.Errorf("a shared-only program attached to the kept tab, the person's and not shared: %s", r)
	}
	url := site.URL + "/form?zzq-kept-compose"
	popup := personOpens(t, kept, url)
	a.must("", "Target.getTargets", nil)
	time.Sleep(500 * time.Millisecond)
	if r, err := a.call("", "Target.attachToTarget", map[string]any{"targetId": popup, "flatten": true}); err == nil {
		t.Errorf("a shared-only program attached to the window the person opened from the tab given to them (Livetab.keepTab): %s", r)
	}
	if got, _ := a.call("", "Target.getTargets", nil); strings.Contains(string(got), "zzq-kept") {
		t.Errorf("a shared-only program lists the person's kept tab or its window: %s", got)
	}
}
