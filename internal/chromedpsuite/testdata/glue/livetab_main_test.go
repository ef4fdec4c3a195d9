// Added by livetab's runner (internal/chromedpsuite): the TestMain of
// chromedp's suite run against livetab. It is in the external test package
// because it imports livetab, and livetab imports chromedp.

package chromedp_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/livetab/livetab/bridge"
	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/extension"
)

// The runner sets these.
const (
	envBackend = "LIVETAB_SUITE_BACKEND" // inproc or endpoint
	envState   = "LIVETAB_SUITE_STATE"   // a directory of this run: profile, chromium.pid
)

func TestMain(m *testing.M) {
	backend, state := os.Getenv(envBackend), os.Getenv(envState)
	if state == "" {
		fmt.Fprintf(os.Stderr, "livetab suite: %s is not set: run the suite with internal/chromedpsuite's runner\n", envState)
		os.Exit(3)
	}
	if backend == "list" { // -test.list: no browser
		os.Exit(m.Run())
	}
	ctx, stop := context.WithCancel(context.Background())
	closeAll, alloc, err := start(ctx, backend, state)
	if err != nil {
		fmt.Fprintf(os.Stderr, "livetab suite: %v\n", err)
		closeAll()
		os.Exit(3)
	}
	// The runner stops a hung run with SIGTERM: close the browser first.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sig
		closeAll()
		os.Exit(4)
	}()
	chromedp.LivetabSetAllocator(alloc)
	code := m.Run()
	stop()
	closeAll()
	chromedp.LivetabCleanup()
	os.Exit(code)
}

// start launches a headless Chromium with the livetab extension and returns
// the allocator context of the backend.
func start(ctx context.Context, backend, state string) (closeAll func(), alloc context.Context, err error) {
	var closers []func()
	closeAll = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
		closers = nil
	}
	exe, err := extension.FindChromium()
	if err != nil {
		return closeAll, nil, err
	}
	b, err := bridge.Listen(ctx, bridge.Options{Addr: "127.0.0.1:0", Token: bridge.NewToken()})
	if err != nil {
		return closeAll, nil, err
	}
	closers = append(closers, func() { b.Close() })
	profile, err := os.MkdirTemp(state, "profile-")
	if err != nil {
		return closeAll, nil, err
	}
	br, err := extension.Start(ctx, extension.Config{URL: b.URL(), Token: b.Token()}, extension.LaunchOptions{
		ExecPath:    exe,
		Headless:    true,
		UserDataDir: profile,
	})
	if err != nil {
		return closeAll, nil, err
	}
	closers = append(closers, func() { br.Close(); os.RemoveAll(profile) })
	writePID(state, profile)
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := b.WaitConnected(wctx); err != nil {
		return closeAll, nil, fmt.Errorf("the extension did not connect: %w", err)
	}

	switch backend {
	case "inproc":
		// The one line of livetab's README.
		a, cancel := extcdp.NewAllocator(ctx, b)
		closers = append(closers, cancel)
		return closeAll, a, nil
	case "endpoint":
		// As `livetab serve` does: the relay's CDP endpoint on the bridge's
		// port, and chromedp's own remote allocator on its URL.
		relay, err := extcdp.NewRelay(b, extcdp.RelayOptions{})
		if err != nil {
			return closeAll, nil, err
		}
		closers = append(closers, func() { relay.Close() })
		tok := bridge.EndpointToken(b.Token())
		h := relay.Handler(extcdp.HandlerOptions{Token: tok})
		for _, p := range []string{"/json", "/json/", "/devtools/", "/livetab/"} {
			b.Handle(p, h)
		}
		u, err := url.Parse(b.URL())
		if err != nil {
			return closeAll, nil, err
		}
		a, cancel := remote.NewAllocator(ctx, relay.BrowserURL(u.Host, tok))
		closers = append(closers, cancel)
		return closeAll, a, nil
	}
	return closeAll, nil, fmt.Errorf("%s=%q: want inproc or endpoint", envBackend, backend)
}

// writePID writes the pid of the Chromium this process started (the leader
// of its process group) to state/chromium.pid, so that the runner can end it
// when this process dies without closing it (log.Fatal in an example).
func writePID(state, profile string) {
	self := strconv.Itoa(os.Getpid())
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range procs {
		stat, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 2 || f[1] != self {
			continue
		}
		dir := filepath.Dir(p)
		cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		if strings.Contains(string(cmdline), "--user-data-dir="+profile) {
			os.WriteFile(filepath.Join(filepath.Dir(profile), "chromium.pid"), []byte(filepath.Base(dir)+" "+profile+"\n"), 0o644)
			return
		}
	}
}
