package capture_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/livetab/livetab/internal/browsertest"
	"github.com/livetab/livetab/internal/studio"
)

var (
	fake     *studio.Studio
	backends browsertest.Backends
)

func TestMain(m *testing.M) {
	fake = studio.New(studio.Options{
		Delay:        150 * time.Millisecond,
		VideoSize:    1<<20 + 12345, // not a whole number of slices
		AudioSize:    128 << 10,
		DownloadSize: 256 << 10,
	})
	code := m.Run()
	backends.Close()
	fake.Close()
	os.Exit(code)
}

// execTab opens a tab in a plain headless Chromium started by chromedp's
// ExecAllocator, shared by the tests.
func execTab(t testing.TB) context.Context { return backends.ExecTab(t) }

// liveTab opens a tab through livetab: the real extension in a headless
// Chromium, over the bridge and the relay.
func liveTab(t testing.TB) context.Context { return backends.LivetabTab(t) }
