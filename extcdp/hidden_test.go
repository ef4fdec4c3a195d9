package extcdp_test

import (
	"slices"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/internal/hidden"
)

// Cancelling a context on the person's tab detaches and leaves the tab
// open; the relay hides it from this client's target lists for a moment,
// so chromedp, which polls them until the tab is gone, returns at once
// instead of after its 500 ms bound. The tab is listed again once the
// moment passed, or as soon as the client attaches to it anew.
func TestCloseHidesTheSparedTabForAMoment(t *testing.T) {
	ctx := newTab(t)
	if err := chromedp.Do(ctx); err != nil { // the contexts below share its browser connection
		t.Fatal(err)
	}
	id := userTab(t, site.URL+"/form?spared")
	closeUserTab(t, id)
	listed := func() bool {
		infos, err := chromedp.Targets(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(infos, func(i *target.Info) bool { return string(i.TargetID) == id })
	}
	spare := func() time.Duration {
		uctx, _ := chromedp.NewContext(ctx, chromedp.WithTargetID(target.ID(id)))
		if err := chromedp.Do(uctx, chromedp.Navigate(site.URL+"/form?spared")); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := chromedp.Cancel(uctx); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	if d := spare(); d >= 500*time.Millisecond {
		t.Errorf("cancelling took %v: chromedp waited out its bound for a tab that stays", d)
	}
	if listed() {
		t.Error("the spared tab is listed right after the cancel")
	}
	spare()
	uctx, cancel := chromedp.NewContext(ctx, chromedp.WithTargetID(target.ID(id)))
	defer cancel()
	if err := chromedp.Do(uctx); err != nil {
		t.Fatal(err)
	}
	if !listed() {
		t.Error("the tab is hidden although the client attached to it again")
	}
	chromedp.Cancel(uctx)
	time.Sleep(hidden.For + 100*time.Millisecond)
	if !listed() {
		t.Errorf("the spared tab is still hidden after %v", hidden.For)
	}
}
