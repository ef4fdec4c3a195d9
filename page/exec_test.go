package page_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

// chromiumPath is the browser binary the tests run. Not /usr/bin/chromium:
// that wrapper script reorders flags.
const chromiumPath = "/usr/lib/chromium/chromium"

// execBrowser is one headless Chromium for the whole test binary; each
// subtest gets a tab of it.
var execBrowser struct {
	once   sync.Once
	ctx    context.Context
	err    error
	cancel func()
}

func TestMain(m *testing.M) {
	code := m.Run()
	if execBrowser.cancel != nil {
		execBrowser.cancel()
	}
	os.Exit(code)
}

// execAllocatorOptions are the flags of the project's test browsers.
func execAllocatorOptions(userDataDir string) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(userDataDir),
	}
}

func startExecBrowser() {
	b := &execBrowser
	if _, err := os.Stat(chromiumPath); err != nil {
		b.err = fmt.Errorf("chromium is not installed at %s (apt-get install chromium): %w", chromiumPath, err)
		return
	}
	dir, err := os.MkdirTemp("", "page-test-profile-")
	if err != nil {
		b.err = err
		return
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), execAllocatorOptions(dir)...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	b.cancel = func() {
		cancelCtx()
		cancelAlloc()
		os.RemoveAll(dir)
	}
	if err := chromedp.Do(ctx); err != nil {
		b.err = fmt.Errorf("starting chromium: %w", err)
		return
	}
	b.ctx = ctx
}

// requireBrowser fails the test when CI=true and no browser can run, and
// skips it otherwise.
func requireBrowser(t testing.TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("no browser for the end-to-end tests: %v", err)
	}
	t.Skipf("no browser for the end-to-end tests: %v", err)
}

// execTab opens a tab of the shared ExecAllocator browser; the test's cleanup
// closes it.
func execTab(t *testing.T) context.Context {
	t.Helper()
	execBrowser.once.Do(startExecBrowser)
	requireBrowser(t, execBrowser.err)
	ctx, cancel := chromedp.NewContext(execBrowser.ctx)
	t.Cleanup(cancel)
	return ctx
}

func TestExecAllocator(t *testing.T) {
	runSuite(t, execTab)
}
