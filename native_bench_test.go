package livetab_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/livetab/livetab"
	"github.com/livetab/livetab/extension"
	"github.com/livetab/livetab/internal/browsertest"
)

// BenchmarkNativeEvaluate is one Runtime.evaluate('1+1') over Chrome's own
// debugging WebSocket: through the native backend's guard, and through
// chromedp's plain remote allocator, to show what the guard costs.
func BenchmarkNativeEvaluate(b *testing.B) {
	browsertest.RequireChromium(b)
	ext := filepath.Join(b.TempDir(), "ext")
	if err := extension.Write(ext, extension.Config{URL: "ws://127.0.0.1:9/extension", Token: "unused"}); err != nil {
		b.Fatal(err)
	}
	br, err := extension.Launch(context.Background(), ext, extension.LaunchOptions{Headless: true, DebugPort: true})
	if err != nil {
		b.Fatal(err)
	}
	defer br.Close()
	allocs := []struct {
		name string
		new  func(context.Context, string) (context.Context, context.CancelFunc)
	}{
		{"guard", livetab.NewNativeAllocator},
		{"remote", func(ctx context.Context, u string) (context.Context, context.CancelFunc) {
			return remote.NewAllocator(ctx, u)
		}},
	}
	for _, a := range allocs {
		b.Run(a.name, func(b *testing.B) {
			actx, cancel := a.new(context.Background(), br.DebugURL)
			defer cancel()
			ctx, cancel := chromedp.NewContext(actx)
			defer cancel()
			if err := chromedp.Do(ctx); err != nil {
				b.Fatal(err)
			}
			params := runtime.EvaluateParams{Expression: "1+1"}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := chromedp.Call(ctx, runtime.Evaluate, params); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
