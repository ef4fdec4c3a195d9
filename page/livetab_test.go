package page_test

import (
	"context"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/internal/browsertest"
)

// livetabBrowser is one headless Chromium with the real livetab extension
// for the whole test binary; each subtest gets a tab through the extension.
var livetabBrowser struct {
	once sync.Once
	env  *browsertest.Env
	err  error
}

func livetabTab(t *testing.T) context.Context {
	t.Helper()
	b := &livetabBrowser
	b.once.Do(func() {
		b.env, b.err = browsertest.StartEnv(browsertest.Options{SitePerProcess: true})
	})
	requireBrowser(t, b.err)
	ctx, cancel := chromedp.NewContext(b.env.Allocator(t))
	t.Cleanup(cancel)
	return ctx
}

// TestLivetab runs the same suite as TestExecAllocator, in tabs of a
// Chromium driven through the livetab extension and chrome.debugger.
func TestLivetab(t *testing.T) {
	t.Cleanup(func() {
		if livetabBrowser.env != nil {
			livetabBrowser.env.Close()
		}
	})
	runSuite(t, livetabTab)
}
