package main

import (
	"context"
	"testing"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
)

// BenchmarkEndpointEvaluate is one Runtime.evaluate('1+1') from chromedp in
// this process, over the serve's WebSocket endpoint, through the real
// extension in the serve's headless Chromium, and back.
func BenchmarkEndpointEvaluate(b *testing.B) {
	if shared == nil {
		b.Skip("no Chromium")
	}
	actx, cancel := remote.NewAllocator(context.Background(), shared.ep.URL)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(site.URL+"/?bench")); err != nil {
		b.Fatal(err)
	}
	params := runtime.EvaluateParams{Expression: "1+1"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := chromedp.Call(ctx, runtime.Evaluate, params); err != nil {
			b.Fatal(err)
		}
	}
}
