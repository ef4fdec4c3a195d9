package capture_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/capture"
	"github.com/livetab/livetab/extension"
	"github.com/livetab/livetab/internal/browsertest"
)

// BenchmarkDownloadDNRCost measures what Chrome itself charges a download
// for an installed extension that holds the declarativeNetRequest
// permission, as livetab's must (an agent's rules): two plain Chromiums,
// one with an idle extension that has only that permission and no rules,
// the same download-only capture on both by DevTools' own download path,
// taken in turns. It reports each side's MB/s and their ratio; see
// docs/media.md. Run it with
//
//	go test ./capture -run '^$' -bench DownloadDNRCost -benchtime 5x
func BenchmarkDownloadDNRCost(b *testing.B) {
	browsertest.RequireChromium(b)
	size := benchSize(b)
	defer fake.SetDownloadSize(fake.SetDownloadSize(size))
	ext := b.TempDir()
	manifest := `{"manifest_version": 3, "name": "idle", "version": "1", "permissions": ["declarativeNetRequest"], "background": {"service_worker": "worker.js"}}`
	if err := os.WriteFile(filepath.Join(ext, "manifest.json"), []byte(manifest), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ext, "worker.js"), []byte("// idle\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	plain := dnrCostTab(b, nil)
	withExt := dnrCostTab(b, []chromedp.ExecAllocatorOption{
		chromedp.Flag("load-extension", ext),
		chromedp.Flag("disable-extensions-except", ext),
	})
	var took [2]time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for side, c := range []*capture.Capturer{plain, withExt} {
			start := time.Now()
			if _, err := c.Element(context.Background(), capture.CSS("#download"), capture.To(capture.Writer(io.Discard))); err != nil {
				b.Fatal(err)
			}
			took[side] += time.Since(start)
		}
	}
	b.StopTimer()
	mbs := func(d time.Duration) float64 { return float64(size) * float64(b.N) / d.Seconds() / 1e6 }
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(mbs(took[0]), "plain-MB/s")
	b.ReportMetric(mbs(took[1]), "dnr-MB/s")
	b.ReportMetric(mbs(took[1])/mbs(took[0]), "ratio")
}

// dnrCostTab starts a plain headless Chromium with extra flags, opens the
// studio's finished job in a tab and captures its download once untimed.
func dnrCostTab(b *testing.B, extra []chromedp.ExecAllocatorOption) *capture.Capturer {
	exe, err := extension.FindChromium()
	if err != nil {
		b.Fatal(err)
	}
	opts := append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(b.TempDir()),
	}, extra...)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	b.Cleanup(cancelA)
	ctx, cancel := chromedp.NewContext(actx)
	b.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.Navigate(fake.URL), chromedp.Click(chromedp.CSS("#generate"))); err != nil {
		b.Fatal(err)
	}
	wctx, cancelW := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelW()
	if _, err := chromedp.Run(wctx, chromedp.Poll[bool](`document.getElementById('status').textContent.startsWith('done')`)); err != nil {
		b.Fatal(err)
	}
	c, err := capture.New(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	if _, err := c.Element(context.Background(), capture.CSS("#download"), capture.To(capture.Writer(io.Discard))); err != nil {
		b.Fatal(err)
	}
	return c
}
