package page_test

import (
	"context"
	"os"
	"testing"

	"github.com/livetab/livetab/internal/browsertest"
)

// backends are the two browsers the suite runs on, each started on first
// use and shared by the tests of this binary; every subtest gets a tab.
var backends = browsertest.Backends{Livetab: browsertest.Options{SitePerProcess: true}}

func TestMain(m *testing.M) {
	code := m.Run()
	backends.Close()
	os.Exit(code)
}

// TestExecAllocator runs the suite in tabs of chromedp's own headless
// Chromium.
func TestExecAllocator(t *testing.T) {
	runSuite(t, func(t *testing.T) context.Context { return backends.ExecTab(t) })
}

// TestLivetab runs the same suite in tabs of a Chromium driven through the
// livetab extension and chrome.debugger.
func TestLivetab(t *testing.T) {
	runSuite(t, func(t *testing.T) context.Context { return backends.LivetabTab(t) })
}
