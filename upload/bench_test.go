package upload_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/internal/browsertest"
	"github.com/livetab/livetab/internal/studio"
	"github.com/livetab/livetab/upload"
)

// BenchmarkUpload100MB streams 100 MB into a file input through the page
// (slices of 1 MiB through Runtime.callFunctionOn) on both backends, through
// livetab's transfer channel (Channel: past CDP, from the relay over
// loopback into the extension's frame), and the
// native path (DOM.setFileInputFiles with a path) on both; it checks the bytes the
// server receives and reports MB/s into the page and the Go heap's peak.
// Run it with
//
//	go test ./upload -run '^$' -bench Upload100MB -benchtime 1x
func BenchmarkUpload100MB(b *testing.B) {
	size := int64(100 << 20)
	if s := os.Getenv("LIVETAB_BENCH_MB"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			b.Fatalf("LIVETAB_BENCH_MB=%q: want a whole number of megabytes", s)
		}
		size = int64(n) << 20
	}
	const seed = 42
	want := studio.Hash(studio.Content(seed, size))
	for _, bk := range []struct {
		name   string
		newTab func(testing.TB) context.Context
		mode   upload.Mode
	}{{"exec", execTab, upload.InPage}, {"livetab", liveTab, upload.InPage}, {"livetab-channel", liveTab, upload.Channel}, {"exec-native", execTab, upload.Native}, {"livetab-native", liveTab, upload.Native}} {
		b.Run(bk.name, func(b *testing.B) {
			ctx := bk.newTab(b)
			file := func(name string) upload.File {
				return upload.Reader(name, studio.Content(seed, size), size)
			}
			if bk.mode == upload.Native {
				path := filepath.Join(b.TempDir(), "big.bin")
				f, err := os.Create(path)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(f, studio.Content(seed, size))
				f.Close()
				file = func(string) upload.File { return upload.Path(path) }
			}
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				fake.ResetUploads()
				if err := navigate(ctx); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				var err error
				var res *upload.Result
				start := time.Now()
				peak := browsertest.PeakHeap(func() {
					res, err = upload.Files(ctx, upload.CSS("#multi"), []upload.File{file("big.bin")}, upload.WithMode(bk.mode))
				})
				elapsed := time.Since(start)
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				wctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				ups, err := fake.WaitUploads(wctx, 1)
				cancel()
				if err != nil {
					b.Fatal(err)
				}
				if ups[0].SHA256 != want || res.Files[0].SHA256 != want {
					b.Fatalf("the server got sha256 %s, want %s", ups[0].SHA256, want)
				}
				b.ReportMetric(float64(size)/(1<<20)/elapsed.Seconds(), "MiB/s-into-page")
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			}
			b.SetBytes(size)
		})
	}
}

func navigate(ctx context.Context) error {
	return chromedp.Do(ctx, chromedp.Navigate(fake.URL))
}
