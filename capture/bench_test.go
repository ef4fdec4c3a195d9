package capture_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/capture"
	"github.com/livetab/livetab/internal/browsertest"
)

// BenchmarkCapture100MB captures a 100 MB video held by the page as a blob
// (rung 2: slices of 1 MiB through Runtime.callFunctionOn) on both backends,
// and reports MB/s and the Go heap's peak during the transfer. Run it with
//
//	go test ./capture -run '^$' -bench Capture100MB -benchtime 1x
func BenchmarkCapture100MB(b *testing.B) {
	for _, bk := range []struct {
		name   string
		newTab func(testing.TB) context.Context
	}{{"exec", execTab}, {"livetab", liveTab}} {
		b.Run(bk.name, func(b *testing.B) {
			const size = 100 << 20
			defer fake.SetVideoSize(fake.SetVideoSize(size))
			ctx := bk.newTab(b)
			c, err := capture.New(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			if err := chromedp.Do(ctx, chromedp.Navigate(fake.URL), chromedp.Click(chromedp.CSS("#generate"))); err != nil {
				b.Fatal(err)
			}
			wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			if _, err := chromedp.Run(wctx, chromedp.Poll[bool](`document.getElementById('status').textContent.startsWith('done')`)); err != nil {
				b.Fatal(err)
			}
			want, _ := fake.Asset("blobvideo")
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var res *capture.Result
				peak := browsertest.PeakHeap(func() {
					res, err = c.Element(context.Background(), capture.CSS("#result-blobvideo"), capture.To(capture.Writer(io.Discard)))
				})
				if err != nil {
					b.Fatal(err)
				}
				if res.SHA256 != want.SHA256 {
					b.Fatalf("got sha256 %s, want %s", res.SHA256, want.SHA256)
				}
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			}
			b.SetBytes(size)
		})
	}
}
