package extcdp_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// chromedp.BrowserEvents hears of a new tab, as on ExecAllocator and
// RemoteAllocator, where chromedp turns on target discovery itself. It heard
// of none (chromedp's TestBrowserEvents waited out its minute).
func TestBrowserEventsHearNewTabs(t *testing.T) {
	ctx := newTab(t)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	created := chromedp.BrowserEvents(sctx, target.TargetCreated)
	tab, cancelTab := chromedp.NewContext(ctx)
	defer cancelTab()
	if err := chromedp.Do(tab, chromedp.Navigate(site.URL+"/form?browser-events")); err != nil {
		t.Fatal(err)
	}
	id := chromedp.FromContext(tab).Target.TargetID
	for ev, err := range created {
		if err != nil {
			t.Fatalf("no Target.targetCreated for the new tab %s: %v", id, err)
		}
		if ev.TargetInfo.TargetID == id {
			return
		}
	}
}
