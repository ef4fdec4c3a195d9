package extension

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/livetab/livetab/internal/activeport"
)

// FindChromium returns the path of a Chromium to launch: $LIVETAB_CHROME if
// set, else the first Chromium or Chrome found in the usual places.
// Chromium comes first: branded Google Chrome 137 and later ignore
// --load-extension, so Launch cannot load the extension into it.
func FindChromium() (string, error) {
	if p := os.Getenv("LIVETAB_CHROME"); p != "" {
		if !isExecutable(p) {
			return "", fmt.Errorf("extension: LIVETAB_CHROME=%s is not an executable file: point it at a Chromium binary or unset it", p)
		}
		return p, nil
	}
	// The Debian package's real binary: /usr/bin/chromium is a shell wrapper
	// that reorders flags.
	paths := []string{"/usr/lib/chromium/chromium", "/usr/lib/chromium-browser/chromium-browser"}
	switch runtime.GOOS {
	case "darwin":
		paths = append(paths,
			"/Applications/Chromium.app/Contents/MacOS/Chromium",
			"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome")
	case "windows":
		for _, env := range []string{"LOCALAPPDATA", "PROGRAMFILES", "PROGRAMFILES(X86)"} {
			if d := os.Getenv(env); d != "" {
				paths = append(paths,
					filepath.Join(d, "Chromium", "Application", "chrome.exe"),
					filepath.Join(d, "Google", "Chrome", "Application", "chrome.exe"))
			}
		}
	}
	for _, p := range paths {
		if isExecutable(p) {
			return p, nil
		}
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome-stable", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("extension: no Chromium found: install it (Debian/Ubuntu: apt-get install chromium; macOS: brew install --cask chromium) or set LIVETAB_CHROME to its executable")
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	if err != nil || fi.IsDir() {
		return false
	}
	return runtime.GOOS == "windows" || fi.Mode()&0o111 != 0
}

// LaunchOptions configure Launch.
type LaunchOptions struct {
	// ExecPath is the browser binary; FindChromium's answer when empty.
	ExecPath string
	// Headless runs without a display, as tests and servers need.
	Headless bool
	// UserDataDir is the profile directory. When empty, Launch makes a
	// temporary one that Close removes.
	UserDataDir string
	// DebugPort also opens a remote-debugging port and fills
	// Browser.DebugURL. Tests use it to reach what chrome.debugger cannot,
	// e.g. to stop the extension's service worker.
	DebugPort bool
	// SitePerProcess puts cross-origin iframes in their own processes, so
	// they become separate CDP targets (flat child sessions).
	SitePerProcess bool
	// Flags are extra command-line flags, added after Launch's own. An
	// argument that is not a flag is a start page, opened instead of
	// about:blank; headless Chromium opens only one (more make it exit).
	Flags []string
	// Stderr receives the browser's log; discarded when nil.
	Stderr io.Writer
	// DebuggerBar leaves out --silent-debugger-extension-api, so that a
	// windowed Chrome shows its "started debugging this browser" bar as it
	// does in the person's browser, where the bar takes height from the
	// page. Tests of what the person sees set it.
	DebuggerBar bool
	// Env is the browser's environment, the process's own when nil; e.g.
	// DISPLAY=:99 for a windowed browser on a virtual display.
	Env []string
}

// Browser is a running Chromium started by Launch.
type Browser struct {
	// DebugURL is the browser-level CDP WebSocket URL,
	// ws://127.0.0.1:PORT/devtools/browser/ID, when LaunchOptions.DebugPort
	// was set.
	DebugURL string
	// UserDataDir is the profile directory in use.
	UserDataDir string

	cmd       *exec.Cmd
	log       *tail // the end of the browser's log, for Err
	tempDir   bool
	extDir    string // a temporary copy of the extension that Close removes
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// Launch starts Chromium with the unpacked extension in extDir (see Write)
// and returns once the process runs, or, with DebugPort, once its debugging
// port is open. ctx bounds the start only: the browser runs until Close.
//
// The browser runs in its own process group so that Close ends its helper
// processes too. It gets --silent-debugger-extension-api unless
// DebuggerBar is set: the "started debugging this browser" infobar would
// shrink the viewport of the tabs livetab drives, and nobody is there to
// read it in a launched browser.
func Launch(ctx context.Context, extDir string, opts LaunchOptions) (*Browser, error) {
	exe := opts.ExecPath
	if exe == "" {
		var err error
		if exe, err = FindChromium(); err != nil {
			return nil, err
		}
	}
	ext, err := filepath.Abs(extDir)
	if err != nil {
		return nil, fmt.Errorf("extension: resolving %s: %w", extDir, err)
	}
	if _, err := os.Stat(filepath.Join(ext, "manifest.json")); err != nil {
		return nil, fmt.Errorf("extension: %s holds no extension: call Write first: %w", ext, err)
	}
	b := &Browser{UserDataDir: opts.UserDataDir, done: make(chan struct{})}
	if b.UserDataDir == "" {
		if b.UserDataDir, err = os.MkdirTemp("", "livetab-chromium-"); err != nil {
			return nil, fmt.Errorf("extension: creating a temporary profile: %w", err)
		}
		b.tempDir = true
	}
	portFile := filepath.Join(b.UserDataDir, activeport.File)
	if opts.DebugPort {
		// A file left by an earlier run would name a dead port.
		os.Remove(portFile)
	}

	var flags, pages []string
	for _, f := range opts.Flags {
		if strings.HasPrefix(f, "-") {
			flags = append(flags, f)
		} else {
			pages = append(pages, f)
		}
	}
	if len(pages) == 0 {
		pages = []string{"about:blank"}
	}
	if opts.Headless && len(pages) > 1 {
		b.removeProfile()
		return nil, fmt.Errorf("extension: headless Chromium opens one start page, not %d (%s): give one URL in LaunchOptions.Flags, and open the others as tabs with chromedp.NewContext", len(pages), strings.Join(pages, " "))
	}

	var args []string
	if opts.Headless {
		args = append(args, "--headless")
	}
	args = append(args,
		"--no-sandbox",
		"--disable-gpu",
		"--disable-quic",
		"--no-first-run",
		"--no-default-browser-check",
		"--disable-background-networking",
		"--disable-component-update",
		"--disable-sync",
		"--window-size=1280,800",
		"--user-data-dir="+b.UserDataDir,
		"--load-extension="+ext,
	)
	if !opts.DebuggerBar {
		args = append(args, "--silent-debugger-extension-api")
	}
	if opts.DebugPort {
		args = append(args, "--remote-debugging-port=0")
	}
	if opts.SitePerProcess {
		args = append(args, "--site-per-process")
	}
	args = append(args, flags...)
	args = append(args, pages...)

	b.cmd = exec.Command(exe, args...)
	b.cmd.Env = opts.Env
	b.log = &tail{}
	b.cmd.Stderr = b.log
	if opts.Stderr != nil {
		b.cmd.Stderr = io.MultiWriter(b.log, opts.Stderr)
	}
	// A helper that outlives the browser must not keep Wait on the log pipe.
	b.cmd.WaitDelay = 2 * time.Second
	setProcessGroup(b.cmd)
	if err := b.cmd.Start(); err != nil {
		b.removeProfile()
		return nil, fmt.Errorf("extension: starting %s: %w: check the path or set LIVETAB_CHROME", exe, err)
	}
	go func() {
		b.cmd.Wait()
		close(b.done)
	}()

	if opts.DebugPort {
		if b.DebugURL, err = waitDebugURL(ctx, portFile, b.done); err != nil {
			if exit := b.Err(); exit != nil {
				err = exit
			}
			b.Close()
			return nil, err
		}
	}
	return b, nil
}

// ErrExited is the error of a launched browser that has exited.
//
//lint:ignore ST1005 Chromium is a name, and the message starts with it.
var ErrExited = errors.New("Chromium exited")

// Err says why the browser exited, with the last lines of its log (a
// browser that dies at start says why only there); nil while it runs. A
// bridge that watches the browser (bridge.Bridge.Watch) fails with it.
func (b *Browser) Err() error {
	select {
	case <-b.done:
	default:
		return nil
	}
	last := b.log.lastLines(5)
	if last == "" {
		return fmt.Errorf("extension: %w (%s); it printed nothing", ErrExited, b.cmd.ProcessState)
	}
	return fmt.Errorf("extension: %w (%s): %s", ErrExited, b.cmd.ProcessState, last)
}

// tail keeps the end of a log.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailSize = 4 << 10

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*tailSize {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailSize:]...)
	}
	return len(p), nil
}

func (t *tail) lastLines(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(t.buf)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, " | "))
}

// waitDebugURL reads the port Chromium chose from the DevToolsActivePort
// file it writes into the profile, once the file is whole.
func waitDebugURL(ctx context.Context, portFile string, done <-chan struct{}) (string, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(portFile); err == nil {
			if u, err := activeport.URL(b); err == nil {
				return u, nil
			}
		}
		select {
		case <-done:
			return "", errors.New("extension: Chromium exited during start")
		case <-ctx.Done():
			return "", fmt.Errorf("extension: Chromium did not open its debugging port: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// Done is closed when the browser process has exited.
func (b *Browser) Done() <-chan struct{} { return b.done }

// Close ends the browser and its helper processes and removes a temporary
// profile. A profile given in LaunchOptions.UserDataDir gets a moment to
// shut down cleanly first, so that it stays usable.
func (b *Browser) Close() error {
	b.closeOnce.Do(func() {
		if !b.tempDir {
			terminateGroup(b.cmd)
			select {
			case <-b.done:
			case <-time.After(3 * time.Second):
			}
		}
		killGroup(b.cmd)
		select {
		case <-b.done:
		case <-time.After(10 * time.Second):
			b.closeErr = fmt.Errorf("extension: Chromium (pid %d) did not exit after SIGKILL", b.cmd.Process.Pid)
			return
		}
		if err := b.removeProfile(); err != nil {
			b.closeErr = err
		}
		if b.extDir != "" {
			os.RemoveAll(b.extDir)
		}
	})
	return b.closeErr
}

// Start writes the extension, configured with cfg, into a temporary
// directory and launches a Chromium that loads it: the one call demos,
// tests and CI need. Close removes the directory too. The extension then
// dials cfg.URL by itself; wait for it on the bridge (WaitConnected).
func Start(ctx context.Context, cfg Config, opts LaunchOptions) (*Browser, error) {
	dir, err := os.MkdirTemp("", "livetab-extension-")
	if err != nil {
		return nil, fmt.Errorf("extension: %w", err)
	}
	if err := Write(dir, cfg); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	b, err := Launch(ctx, dir, opts)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	b.extDir = dir
	return b, nil
}

// removeProfile deletes a temporary profile. Helper processes may still be
// letting go of files for a moment after the main process is gone, so it
// retries briefly.
func (b *Browser) removeProfile() error {
	if !b.tempDir {
		return nil
	}
	var err error
	for range 20 {
		if err = os.RemoveAll(b.UserDataDir); err == nil {
			return nil
		}
		time.Sleep(25 * time.Millisecond)
	}
	return fmt.Errorf("extension: removing the temporary profile %s: %w", b.UserDataDir, err)
}
