package page_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// BenchmarkNewTab opens a tab and closes it, as chromedp does for every
// NewContext: Target.createTarget, the attach and chromedp's own setup of
// the tab, then the cancel (Target.closeTarget and the wait for the
// target to go). Compare livetab's figures with exec's of the same run:
//
//	go test ./page -run '^$' -bench NewTab -benchtime 20x
//
// Measured on a 2-core machine (2026-11-29, 20 tabs each): open 402 ms
// plain, 439 ms livetab; close 37 ms plain, 104 ms livetab. Most of a
// tab's cost is Chrome's own (a renderer for the tab) on both backends.
func BenchmarkNewTab(b *testing.B) {
	for _, bk := range []struct {
		name   string
		newTab func(testing.TB) context.Context
	}{{"exec", backends.ExecTab}, {"livetab", backends.LivetabTab}} {
		b.Run(bk.name, func(b *testing.B) {
			base := bk.newTab(b)
			if err := chromedp.Do(base); err != nil {
				b.Fatal(err)
			}
			var open, closing time.Duration
			for b.Loop() {
				t0 := time.Now()
				ctx, cancel := chromedp.NewContext(base)
				if err := chromedp.Do(ctx); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				cancel()
				closing += time.Since(t1)
				open += t1.Sub(t0)
			}
			b.ReportMetric(float64(open.Milliseconds())/float64(b.N), "open-ms")
			b.ReportMetric(float64(closing.Milliseconds())/float64(b.N), "close-ms")
		})
	}
}
