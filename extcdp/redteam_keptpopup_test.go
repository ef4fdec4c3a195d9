package extcdp_test

import (
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamKeptTabsPopupIsNotShared: a program opens a tab, signs in
// there and gives it to the person (Livetab.keepTab: "the person's now",
// listed without Created, seen by other programs "as any of the person's
// tabs"), then leaves. The person goes on in it and opens a window from it
// (a compose window with a draft). mayUse walks the popup's openers to a
// tab livetab created and stopped at the kept tab, whose extension report
// still said created: a program held to shared tabs attached to the
// person's window (and to the kept tab), though neither was shared. Now a
// kept tab counts as the person's, and the extension is told, for the
// relays that come later.
func TestRedTeamKeptTabsPopupIsNotShared(t *testing.T) {
	maker := dialRaw(t)
	kept := field(maker.must("", "Target.createTarget", map[string]any{"url": site.URL + "/form?kept-tab"}), "targetId")
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
	url := site.URL + "/form?kept-tab-compose"
	popup := personOpens(t, kept, url)
	a.must("", "Target.getTargets", nil)
	time.Sleep(500 * time.Millisecond)
	if r, err := a.call("", "Target.attachToTarget", map[string]any{"targetId": popup, "flatten": true}); err == nil {
		t.Errorf("a shared-only program attached to the window the person opened from the tab given to them (Livetab.keepTab): %s", r)
	}
	if got, _ := a.call("", "Target.getTargets", nil); strings.Contains(string(got), "kept-tab") {
		t.Errorf("a shared-only program lists the person's kept tab or its window: %s", got)
	}
	// The extension was told too: a relay started later (it keeps
	// "created" across relays) takes the tab for the person's as well.
	waitFor(t, "the extension to report the kept tab as the person's", func() bool {
		res, err := env.Bridge.Call(t.Context(), wire.Targets, 0, nil)
		if err != nil {
			return false
		}
		var v wire.TargetsResult
		if jsonv2.Unmarshal(res, &v) != nil {
			return false
		}
		for _, tb := range v.Targets {
			if tb.TargetID == kept {
				return !tb.Created
			}
		}
		return false
	})
}
