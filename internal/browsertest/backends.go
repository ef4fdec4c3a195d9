package browsertest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/extension"
)

// Backends are the two browsers a suite of a package that works on any
// chromedp tab (page, capture, upload) runs on: a plain headless Chromium
// through chromedp's ExecAllocator, and one driven through the livetab
// extension. Each starts on first use and is shared by the tests of the
// binary; every tab is the test's own.
type Backends struct {
	// Livetab are the options of the livetab browser.
	Livetab Options

	execOnce sync.Once
	execCtx  context.Context
	execStop func()
	execErr  error

	liveOnce sync.Once
	liveEnv  *Env
	liveErr  error
}

// ExecTab opens a tab of the plain Chromium.
func (b *Backends) ExecTab(t testing.TB) context.Context {
	t.Helper()
	RequireChromium(t)
	b.execOnce.Do(b.startExec)
	if b.execErr != nil {
		t.Fatal(b.execErr)
	}
	ctx, cancel := chromedp.NewContext(b.execCtx)
	t.Cleanup(cancel)
	return ctx
}

func (b *Backends) startExec() {
	exe, err := extension.FindChromium()
	if err != nil {
		b.execErr = err
		return
	}
	dir, err := os.MkdirTemp("", "livetab-exec-profile-")
	if err != nil {
		b.execErr = err
		return
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(dir),
		chromedp.WindowSize(1280, 800),
	)
	bctx, cancelB := chromedp.NewContext(actx)
	b.execStop = func() { cancelB(); cancelA(); os.RemoveAll(dir) }
	if err := chromedp.Do(bctx); err != nil {
		b.execErr = fmt.Errorf("starting Chromium: %w", err)
		return
	}
	b.execCtx = bctx
}

// LivetabTab opens a tab through livetab: the real extension in a headless
// Chromium, over the bridge and the relay.
func (b *Backends) LivetabTab(t testing.TB) context.Context {
	t.Helper()
	RequireChromium(t)
	b.liveOnce.Do(func() { b.liveEnv, b.liveErr = StartEnv(b.Livetab) })
	if b.liveErr != nil {
		t.Fatal(b.liveErr)
	}
	ctx, cancel := chromedp.NewContext(b.liveEnv.Allocator(t))
	t.Cleanup(cancel)
	return ctx
}

// Close stops whichever browsers started.
func (b *Backends) Close() {
	if b.execStop != nil {
		b.execStop()
	}
	if b.liveEnv != nil {
		b.liveEnv.Close()
	}
}
