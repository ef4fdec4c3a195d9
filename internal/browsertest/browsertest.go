// Package browsertest starts what the end-to-end tests need: a bridge, the
// real livetab extension written to a temporary directory with the bridge's
// address and token, and a headless Chromium that loads it.
package browsertest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/bridge"
	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/extension"
)

// Options choose how the test browser starts.
type Options struct {
	// SitePerProcess makes cross-origin iframes separate targets.
	SitePerProcess bool
	// DebugPort gives the test its own remote-debugging port on the browser,
	// to stop the extension's service worker or act as "the user".
	DebugPort bool
	// Windowed runs Chromium with a window, on a virtual display of its own
	// (Xvfb), as the person's browser runs; headless otherwise.
	Windowed bool
	// DebuggerBar shows Chrome's "started debugging this browser" bar
	// (no --silent-debugger-extension-api), which takes height from the
	// page in a windowed browser. Use it with Windowed.
	DebuggerBar bool
	// Bridge options; Addr defaults to a free loopback port and Token to a
	// fresh one.
	Bridge bridge.Options
}

// Env is one running test browser with the extension connected.
type Env struct {
	Bridge  *bridge.Bridge
	Browser *extension.Browser
	// Relay is the bridge's relay: extcdp.NewAllocator on Bridge uses it,
	// and so can the test's own endpoint (Relay.Handler).
	Relay *extcdp.Relay

	cancel context.CancelFunc
	dir    string
	xvfb   *xvfb
	// ctx, config and launch start the browser again (RestartBrowser).
	ctx    context.Context
	config extension.Config
	launch extension.LaunchOptions
}

// Start launches an Env, waits for the extension to connect and registers
// its cleanup with t.
func Start(t testing.TB, opts Options) *Env {
	t.Helper()
	RequireChromium(t)
	if opts.Windowed {
		RequireXvfb(t)
	}
	env, err := StartEnv(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Close)
	return env
}

// StartEnv is Start for TestMain, where there is no testing.TB.
func StartEnv(opts Options) (*Env, error) {
	exe, err := extension.FindChromium()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "livetab-test-")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	env := &Env{cancel: cancel, dir: dir}
	bo := opts.Bridge
	if bo.Addr == "" {
		bo.Addr = "127.0.0.1:0"
	}
	if bo.Token == "" && bo.TokenFile == "" {
		bo.Token = bridge.NewToken()
	}
	if env.Bridge, err = bridge.Listen(ctx, bo); err != nil {
		env.Close()
		return nil, err
	}
	var ro extcdp.RelayOptions
	if os.Getenv("LIVETAB_TEST_RELAY_LOG") != "" {
		// What the relay did and refused, for a look inside.
		ro.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if env.Relay, err = extcdp.NewRelay(env.Bridge, ro); err != nil {
		env.Close()
		return nil, err
	}
	var stderr io.Writer
	if os.Getenv("LIVETAB_TEST_CHROME_LOG") != "" {
		stderr = os.Stderr
	}
	var procEnv []string
	if opts.Windowed {
		if env.xvfb, err = startXvfb(); err != nil {
			env.Close()
			return nil, err
		}
		procEnv = env.xvfb.env()
	}
	env.ctx = ctx
	env.config = extension.Config{URL: env.Bridge.URL(), Token: env.Bridge.Token()}
	env.launch = extension.LaunchOptions{
		ExecPath:       exe,
		Headless:       !opts.Windowed,
		DebuggerBar:    opts.DebuggerBar,
		Env:            procEnv,
		DebugPort:      opts.DebugPort,
		SitePerProcess: opts.SitePerProcess,
		UserDataDir:    dir + "/profile",
		Stderr:         stderr,
	}
	// Extra flags for a look inside, e.g. --enable-logging=stderr.
	if f := os.Getenv("LIVETAB_TEST_CHROME_FLAGS"); f != "" {
		env.launch.Flags = strings.Fields(f)
	}
	if err := env.startBrowser(); err != nil {
		env.Close()
		return nil, err
	}
	return env, nil
}

// startBrowser launches the browser and waits for its extension.
func (e *Env) startBrowser() error {
	var err error
	if e.Browser, err = extension.Start(e.ctx, e.config, e.launch); err != nil {
		e.Browser = nil
		return err
	}
	wctx, wcancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer wcancel()
	if err := e.Bridge.WaitConnected(wctx); err != nil {
		return fmt.Errorf("browsertest: the extension did not connect: %w", err)
	}
	return nil
}

// RestartBrowser quits the browser and starts it again on the same
// profile, as the person does, and waits for the extension to connect.
// A User of the old browser is gone: connect a new one.
func (e *Env) RestartBrowser() error {
	if e.Browser != nil {
		e.Browser.Close()
	}
	// The bridge notices the extension's socket closing a moment later;
	// until then it would count the old browser as connected.
	for i := 0; i < 500 && e.Bridge.Connected(); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	return e.startBrowser()
}

// Allocator returns a chromedp allocator context on the env's bridge.
func (e *Env) Allocator(t testing.TB) context.Context {
	ctx, cancel := extcdp.NewAllocator(context.Background(), e.Bridge)
	t.Cleanup(cancel)
	return ctx
}

// Close stops the browser and the bridge and removes the temporary files.
func (e *Env) Close() {
	if e.Relay != nil {
		e.Relay.Close()
	}
	if e.Browser != nil {
		e.Browser.Close()
	}
	e.cancel()
	if e.xvfb != nil {
		e.xvfb.close()
	}
	os.RemoveAll(e.dir)
}

// RequireChromium fails the test when no Chromium is installed and CI is
// set (a test that skips there proves nothing), and skips it otherwise.
func RequireChromium(t testing.TB) {
	t.Helper()
	if _, err := extension.FindChromium(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("Chromium is required under CI: %v", err)
		}
		t.Skipf("no Chromium: %v", err)
	}
}
