package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/livetab/livetab"
	"github.com/livetab/livetab/bridge"
	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/extension"
)

// launchMode is the value of --launch: "" (off), "window" or "headless".
// It is a boolean flag, so that a bare --launch means a window.
type launchMode string

func (l *launchMode) String() string   { return string(*l) }
func (l *launchMode) IsBoolFlag() bool { return true }
func (l *launchMode) Synopsis() string { return "--launch[=headless]" }
func (l *launchMode) Set(s string) error {
	switch s {
	case "true", "window":
		*l = "window"
	case "headless":
		*l = "headless"
	case "false":
		*l = ""
	default:
		return fmt.Errorf("want --launch, --launch=headless or --launch=false, not %q", s)
	}
	return nil
}

// checkLoopback refuses a listen address off this machine: whoever reaches
// the port drives the user's browser.
func checkLoopback(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("bad address %q: want HOST:PORT, e.g. 127.0.0.1:9339", addr)
	}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return nil
	}
	if port == "0" || port == "" {
		port = "9339"
	}
	return fmt.Errorf("refusing to listen on %s: livetab listens on loopback only (127.0.0.1), because whoever reaches the port drives your browser. "+
		"To use it from another machine, tunnel over SSH from there: ssh -N -L %s:127.0.0.1:%s you@this-machine, then use the URL of `livetab endpoint` on that machine", addr, port, port)
}

func runServe(ctx context.Context, args []string) error {
	fs := flags("serve", "")
	addr := fs.String("addr", bridge.DefaultAddr, "loopback `address` to listen on; port 0 picks a free one (the endpoint file records it)")
	var launch launchMode
	fs.Var(&launch, "launch", "start a Chromium with a fresh profile and the extension; --launch=headless without a window")
	chrome := fs.String("chrome", "", "the Chromium `binary` for --launch (default: $LIVETAB_CHROME, else found on the system)")
	single := fs.Bool("single-client", false, "refuse a second CDP client while one is connected")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return errUsage
	}
	if err := checkLoopback(*addr); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	lg := logger()

	epPath, err := livetab.EndpointFile()
	if err != nil {
		return err
	}
	b, err := bridge.Listen(ctx, bridge.Options{Addr: *addr, Logger: lg})
	if err != nil {
		return err
	}
	defer b.Close()
	relay, err := extcdp.NewRelay(b, extcdp.RelayOptions{Logger: lg})
	if err != nil {
		return err
	}
	defer relay.Close()
	// Not the pairing token: a client that held it could pair as the
	// extension and see the other clients' commands.
	epToken := bridge.EndpointToken(b.Token())
	h := relay.Handler(extcdp.HandlerOptions{Token: epToken, SingleClient: *single, Logger: lg})
	for _, p := range []string{"/json", "/json/", "/devtools/", "/livetab/"} {
		b.Handle(p, h)
	}
	host := b.Addr().String()
	ep := livetab.Endpoint{URL: relay.BrowserURL(host, epToken), HTTP: "http://" + host, PID: os.Getpid()}

	var browserDone <-chan struct{}
	if launch != "" {
		br, err := launchBrowser(ctx, b, *chrome, launch == "headless")
		if err != nil {
			return err
		}
		defer br.stop(lg)
		browserDone = br.Done()
		lg.Info("launched Chromium with the extension", "headless", launch == "headless")
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		go func() {
			select {
			case <-browserDone:
				cancel()
			case <-wctx.Done():
			}
		}()
		err = b.WaitConnected(wctx)
		cancel()
		select {
		case <-browserDone:
			return errors.New("the launched Chromium exited before its extension connected (without a display, use --launch=headless; `livetab doctor` checks the browser)")
		default:
		}
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			return fmt.Errorf("the launched Chromium's extension did not connect within 30 s (run with --launch instead of --launch=headless to watch it, or check chrome://extensions there): %w", err)
		}
	}

	if old, err := livetab.ReadEndpoint(epPath); err == nil && !staleEndpoint(ctx, old, ep) {
		lg.Warn("another livetab serve runs; its endpoint file now names this one", "other_pid", old.PID, "other", old.HTTP)
	}
	if err := livetab.WriteEndpoint(epPath, ep); err != nil {
		return err
	}
	defer removeEndpoint(epPath, ep.PID, lg)

	// The endpoint URL carries the token, so the log names the file, and
	// `livetab endpoint` prints the URL.
	lg.Info("serving CDP", "http", ep.HTTP, "endpoint_file", epPath, "hint", "`livetab endpoint` prints the URL for clients")
	if !b.Connected() {
		lg.Info("waiting for the extension to connect", "bridge", b.URL(),
			"hint", "install it with `livetab extension DIR` and Load unpacked; `livetab doctor` checks the rest")
	}

	select {
	case <-ctx.Done():
		stop() // a second Ctrl-C ends the process at once
		lg.Info("shutting down")
		return nil
	case <-browserDone:
		return errors.New("the launched Chromium exited; serve stops with it")
	}
}

// removeEndpoint deletes the endpoint file unless another serve has written
// its own since.
func removeEndpoint(path string, pid int, lg *slog.Logger) {
	e, err := livetab.ReadEndpoint(path)
	if err != nil || e.PID != pid {
		return
	}
	if err := os.Remove(path); err != nil {
		lg.Warn("removing the endpoint file", "file", path, "err", err)
	}
}

type launched struct {
	*extension.Browser
	dir string
}

// launchBrowser writes the extension, paired with b, to a temporary
// directory and starts a Chromium with a fresh profile that loads it.
func launchBrowser(ctx context.Context, b *bridge.Bridge, exe string, headless bool) (*launched, error) {
	dir, err := os.MkdirTemp("", "livetab-serve-")
	if err != nil {
		return nil, fmt.Errorf("creating a temporary directory for the extension: %w", err)
	}
	ext := filepath.Join(dir, "extension")
	if err := extension.Write(ext, extension.Config{URL: b.URL(), Token: b.Token()}); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// No UserDataDir: Launch makes a fresh temporary profile and removes
	// it on Close.
	br, err := extension.Launch(ctx, ext, extension.LaunchOptions{ExecPath: exe, Headless: headless})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	b.Watch(br)
	return &launched{Browser: br, dir: dir}, nil
}

func (l *launched) stop(lg *slog.Logger) {
	if err := l.Close(); err != nil {
		lg.Warn("closing Chromium", "err", err)
	}
	if err := os.RemoveAll(l.dir); err != nil {
		lg.Warn("removing the launched browser's extension", "dir", l.dir, "err", err)
	}
}
