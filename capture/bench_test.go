package capture_test

import (
	"context"
	"io"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/capture"
	"github.com/livetab/livetab/internal/browsertest"
)

// benchSize is the size of the benchmarks' media: 100 MB, or
// LIVETAB_BENCH_MB megabytes (small sizes while iterating on a busy
// machine).
func benchSize(tb testing.TB) int64 {
	if s := os.Getenv("LIVETAB_BENCH_MB"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			tb.Fatalf("LIVETAB_BENCH_MB=%q: want a whole number of megabytes", s)
		}
		return int64(n) << 20
	}
	return 100 << 20
}

// BenchmarkCapture100MB captures 100 MB media on both backends: a video the
// page holds as a blob (by the whole ladder, and by the transfer channel
// and the in-page slices alone for comparison), a range-served video and a download-only file
// (a button that starts a download). It reports MB/s, the Go heap's peak
// during the transfer and the rung that ran. Compare the livetab figures
// with the exec ones of the same run. Run it with
//
//	go test ./capture -run '^$' -bench Capture100MB -benchtime 1x
func BenchmarkCapture100MB(b *testing.B) {
	size := benchSize(b)
	for _, bk := range []struct {
		name   string
		newTab func(testing.TB) context.Context
	}{{"exec", execTab}, {"livetab", liveTab}} {
		for _, mc := range []struct {
			name, sel, kind string
			rungs           []capture.Rung
		}{
			{"blob", "#result-blobvideo", "blobvideo", nil},
			{"blob-channel", "#result-blobvideo", "blobvideo", []capture.Rung{capture.RungChannel}},
			{"blob-in-page", "#result-blobvideo", "blobvideo", []capture.Rung{capture.RungPage}},
			{"range-video", "#result-video", "video", nil},
			{"download-only", "#download", "download", nil},
		} {
			if bk.name == "exec" && slices.Contains(mc.rungs, capture.RungChannel) {
				continue // plain Chrome has no transfer channel
			}
			b.Run(bk.name+"/"+mc.name, func(b *testing.B) {
				defer fake.SetVideoSize(fake.SetVideoSize(size))
				defer fake.SetDownloadSize(fake.SetDownloadSize(size))
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
				want, _ := fake.Asset(mc.kind)
				opts := []capture.Option{capture.To(capture.Writer(io.Discard))}
				if mc.rungs != nil {
					opts = append(opts, capture.Rungs(mc.rungs...))
				}
				// One capture untimed first: a browser's first one pays for
				// its cold start (the plain browser's first blob took
				// 560-680 ms against 470-550 after it, on a quiet machine),
				// and the backend whose row came first was the one to pay.
				if _, err := c.Element(context.Background(), capture.CSS(mc.sel), opts...); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					var res *capture.Result
					peak := browsertest.PeakHeap(func() {
						res, err = c.Element(context.Background(), capture.CSS(mc.sel), opts...)
					})
					if err != nil {
						b.Fatal(err)
					}
					if res.SHA256 != want.SHA256 {
						b.Fatalf("got sha256 %s, want %s", res.SHA256, want.SHA256)
					}
					b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
					b.ReportMetric(float64(res.Rung), "rung")
				}
				b.SetBytes(size)
			})
		}
	}
}
