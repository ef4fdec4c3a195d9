package livetab

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/chromedp/chromedp/remote"

	"github.com/livetab/livetab/bridge"
	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/extension"
)

// Way is one of the ways [Connect] reaches a browser, in the order it tries
// them.
type Way string

const (
	// WayServe is a running `livetab serve`, found through its endpoint
	// file: it holds the extension's connection for every program.
	WayServe Way = "serve"
	// WayExtension is the person's extension dialing a bridge in this
	// process, at the address and with the token `livetab pair` printed.
	WayExtension Way = "extension"
	// WayNative is Chrome's own remote debugging (DevToolsActivePort,
	// chrome://inspect/#remote-debugging in Chrome 144 and later), for a
	// Chrome without the extension.
	WayNative Way = "native"
	// WayLaunch is a Chromium launched with the extension and a fresh
	// profile: no logins, so Connect tries it only when asked.
	WayLaunch Way = "launch"
)

// ways is the order Connect tries them in, whatever order Options.Ways has.
var ways = []Way{WayServe, WayExtension, WayNative, WayLaunch}

// ErrNoBrowser means Connect found no browser by any way it tried. The
// error that wraps it also wraps each way's own error ([ErrNotRunning],
// [bridge.ErrNotConnected], [ErrNoNativeChrome], ...), and is a
// [*ConnectError] that lists why each way was skipped.
var ErrNoBrowser = errors.New("no browser found: start `livetab serve`, or open Chrome with the livetab extension paired (`livetab pair`), or allow remote debugging at chrome://inspect/#remote-debugging, or let Connect launch a Chromium (Options.Launch)")

// DefaultExtensionWait is how long [Connect] waits for the extension to dial
// its bridge. The extension dials again at most 5 s after a failed dial,
// so a little more than that catches one that is running.
const DefaultExtensionWait = 6 * time.Second

// launchWait bounds the start of a launched Chromium and its extension.
const launchWait = 30 * time.Second

// Options configure [Connect]. The zero value tries a running serve, then
// the extension at [bridge.DefaultAddr], then Chrome's remote debugging in
// the usual profiles; never a launch.
type Options struct {
	// EndpointFile is the endpoint file to read; default [EndpointFile].
	EndpointFile string
	// CheckTimeout bounds the check that the serve answers and accepts the
	// token. Default 5 s.
	CheckTimeout time.Duration

	// Ways limits the ways to try; they are tried in the order of the Way
	// constants whatever the order here. Default: serve, extension and
	// native, and launch when Launch is set. Naming WayLaunch asks for a
	// launch too.
	Ways []Way

	// BridgeAddr is where the extension dials (WayExtension); default
	// [bridge.DefaultAddr], what `livetab pair` and `livetab extension`
	// configure.
	BridgeAddr string
	// TokenFile holds the pairing token the extension was given; default
	// [bridge.DefaultTokenFile]. Without it the extension cannot be
	// paired, so WayExtension is skipped without waiting.
	TokenFile string
	// ExtensionWait bounds the wait for the extension to dial; default
	// [DefaultExtensionWait].
	ExtensionWait time.Duration
	// WaitForExtension makes Connect settle for WayExtension when no way
	// answers (and no launch was asked for): its bridge keeps listening and
	// [Connection.Ready] waits for the extension. For a program started
	// before the person opens Chrome, as `livetab mcp` is.
	WaitForExtension bool

	// ProfileDir is the Chrome user data directory whose
	// DevToolsActivePort WayNative reads; empty for [ChromeProfileDirs].
	ProfileDir string

	// Launch, when set, asks for WayLaunch as the last way: a Chromium
	// with the extension, started with these options (its extension
	// pairs with a bridge of this process on a free port and a fresh
	// token). Cancelling Connect's context closes it.
	Launch *extension.LaunchOptions

	// ClientName is how the person sees the program in the extension's
	// popup, where they can stop it (serve, extension and launch ways).
	// Default: the program's file name.
	ClientName string

	// Logger receives the bridge's connection events; default discard.
	Logger *slog.Logger
}

// Step is one way Connect tried and skipped.
type Step struct {
	Way Way
	// Reason says why the way was skipped, for a person to read.
	Reason string
	// Err is the error behind Reason, for errors.Is; nil when the way was
	// not tried at all.
	Err error

	// keep is the extension's bridge, still listening for WaitForExtension.
	keep *found
}

func (s Step) String() string { return string(s.Way) + ": " + s.Reason }

// Connection says how [Connect] reached the browser. [FromContext] returns
// it from Connect's context and every context derived from it, such as
// chromedp.NewContext's.
type Connection struct {
	// Way is the way chosen.
	Way Way
	// Reason says what was found, e.g. which serve or profile.
	Reason string
	// Skipped are the ways tried before Way, in order, with why each was
	// skipped.
	Skipped []Step
	// Bridge is the bridge of this process for WayExtension and
	// WayLaunch; nil otherwise.
	Bridge *bridge.Bridge
	// Browser is the launched Chromium for WayLaunch; nil otherwise.
	Browser *extension.Browser
	// Waiting is true when WaitForExtension chose WayExtension before
	// the extension connected.
	Waiting bool
}

// String is one line for a log: the way chosen and why the earlier ones
// were skipped.
func (c *Connection) String() string {
	s := string(c.Way) + ": " + c.Reason
	for _, st := range c.Skipped {
		s += "; skipped " + st.String()
	}
	return s
}

// Ready waits, within ctx, until the browser can take commands: for
// WayExtension until the extension is connected, at once for the others.
func (c *Connection) Ready(ctx context.Context) error {
	if c.Bridge == nil {
		return nil
	}
	if err := c.Bridge.WaitConnected(ctx); err != nil {
		return fmt.Errorf("livetab: the extension has not connected to %s (is Chrome open with the extension installed and paired? `livetab doctor` checks): %w", c.Bridge.URL(), err)
	}
	return nil
}

type connKey struct{}

// FromContext returns how the context's browser was reached, when the
// context comes from [Connect]; nil otherwise.
func FromContext(ctx context.Context) *Connection {
	c, _ := ctx.Value(connKey{}).(*Connection)
	return c
}

// ConnectError is the error of a Connect that found no browser: why each
// way was skipped. It wraps [ErrNoBrowser] and each step's error.
type ConnectError struct {
	Skipped []Step
}

func (e *ConnectError) Error() string {
	var b strings.Builder
	b.WriteString("livetab: ")
	b.WriteString(ErrNoBrowser.Error())
	for _, s := range e.Skipped {
		b.WriteString("; ")
		b.WriteString(s.String())
	}
	return b.String()
}

func (e *ConnectError) Unwrap() []error {
	errs := []error{ErrNoBrowser}
	for _, s := range e.Skipped {
		if s.Err != nil {
			errs = append(errs, s.Err)
		}
	}
	return errs
}

// Connect finds a browser and returns a chromedp allocator context on it:
// use it as the parent of chromedp.NewContext. It tries, in order:
//
//  1. a running `livetab serve`, through its endpoint file, after checking
//     that it answers and takes the token;
//  2. the person's extension dialing a bridge in this process at
//     Options.BridgeAddr with the token of Options.TokenFile (what
//     `livetab pair` set up), waiting up to Options.ExtensionWait;
//  3. Chrome's own remote debugging, through DevToolsActivePort (see
//     [ConnectNative]);
//  4. only when Options.Launch is set, a launched Chromium with the
//     extension.
//
// [FromContext] on the returned context (or any chromedp context under it)
// says which way was chosen and why the earlier ones were skipped. Every
// way keeps livetab's closing rule: cancelling a chromedp context closes
// only the tabs it opened. The returned cancel also closes what Connect
// started (its bridge, a launched browser). When no way answers, the error
// is a [*ConnectError] wrapping [ErrNoBrowser] and each way's error
// (docs/decisions/2026-11-24-connect-finds-a-browser.md).
func Connect(ctx context.Context, opts ...Options) (context.Context, context.CancelFunc, error) {
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.CheckTimeout <= 0 {
		o.CheckTimeout = 5 * time.Second
	}
	if o.ExtensionWait <= 0 {
		o.ExtensionWait = DefaultExtensionWait
	}
	if o.BridgeAddr == "" {
		o.BridgeAddr = bridge.DefaultAddr
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	asked := o.Ways
	if len(asked) == 0 {
		asked = []Way{WayServe, WayExtension, WayNative}
		if o.Launch != nil {
			asked = append(asked, WayLaunch)
		}
	}

	var skipped []Step
	// A bridge the extension did not dial in time, kept for
	// WaitForExtension until a later way answers.
	var waiting *found
	for _, w := range ways {
		if err := ctx.Err(); err != nil {
			if waiting != nil {
				waiting.cancel()
			}
			return nil, nil, fmt.Errorf("livetab: Connect stopped before trying %s: %w", w, err)
		}
		if !slices.Contains(asked, w) {
			reason := "not among Options.Ways"
			if w == WayLaunch {
				reason = "not asked for (set Options.Launch)"
			}
			skipped = append(skipped, Step{Way: w, Reason: reason})
			continue
		}
		var f *found
		var st Step
		switch w {
		case WayServe:
			f, st = o.serve(ctx)
		case WayExtension:
			f, st = o.extension(ctx)
		case WayNative:
			f, st = o.native(ctx)
		case WayLaunch:
			f, st = o.launch(ctx)
		}
		if f == nil {
			st.Way = w
			skipped = append(skipped, st)
			if w == WayExtension && o.WaitForExtension {
				waiting = st.keep
			}
			continue
		}
		if waiting != nil {
			waiting.cancel()
		}
		return f.finish(w, skipped)
	}
	if waiting != nil {
		waiting.reason = "nothing else answered: waiting for the extension to dial " + waiting.bridge.URL()
		waiting.waiting = true
		return waiting.finish(WayExtension, skipped)
	}
	return nil, nil, &ConnectError{Skipped: skipped}
}

// found is a way that answered: the allocator context on it, and what to
// close with it.
type found struct {
	actx    context.Context
	cancel  context.CancelFunc
	reason  string
	bridge  *bridge.Bridge
	browser *extension.Browser
	waiting bool
}

func (f *found) finish(w Way, skipped []Step) (context.Context, context.CancelFunc, error) {
	c := &Connection{Way: w, Reason: f.reason, Skipped: skipped, Bridge: f.bridge, Browser: f.browser, Waiting: f.waiting}
	return context.WithValue(f.actx, connKey{}, c), f.cancel, nil
}

// withClient adds the client parameter, the name the serve shows the
// person, to the endpoint's browser URL.
func withClient(wsURL, name string) string {
	if name == "" {
		name = filepath.Base(os.Args[0]) + " (chromedp)"
	}
	u, err := url.Parse(wsURL)
	if err != nil {
		return wsURL
	}
	q := u.Query()
	q.Set("client", name)
	u.RawQuery = q.Encode()
	return u.String()
}

func (o Options) serve(ctx context.Context) (*found, Step) {
	path := o.EndpointFile
	if path == "" {
		var err error
		if path, err = EndpointFile(); err != nil {
			return nil, Step{Reason: "no endpoint file: " + err.Error(), Err: err}
		}
	}
	e, err := ReadEndpoint(path)
	switch {
	case errors.Is(err, ErrNotRunning):
		return nil, Step{Reason: "no endpoint file at " + path + " (no `livetab serve` runs)", Err: err}
	case err != nil:
		return nil, Step{Reason: err.Error(), Err: err}
	}
	cctx, cancel := context.WithTimeout(ctx, o.CheckTimeout)
	defer cancel()
	if _, err := Probe(cctx, e); err != nil {
		reason := err.Error()
		switch {
		case errors.Is(err, ErrTokenRefused):
			reason = fmt.Sprintf("the serve at %s refused the token of %s (it belongs to another serve: restart `livetab serve`)", e.HTTP, path)
		case errors.Is(err, ErrNotRunning):
			reason = fmt.Sprintf("the endpoint file %s names %s, where nothing answers (serve pid %d is gone)", path, e.HTTP, e.PID)
		case errors.Is(err, ErrNotServe):
			reason = fmt.Sprintf("the endpoint file %s names %s, where a program that is not the serve answers (serve pid %d is gone?); its token was not sent", path, e.HTTP, e.PID)
		}
		return nil, Step{Reason: reason, Err: err}
	}
	actx, acancel := remote.NewAllocator(ctx, withClient(e.URL, o.ClientName))
	return &found{actx: actx, cancel: acancel, reason: fmt.Sprintf("livetab serve (pid %d) answers at %s", e.PID, e.HTTP)}, Step{}
}

func (o Options) extension(ctx context.Context) (*found, Step) {
	path := o.TokenFile
	if path == "" {
		var err error
		if path, err = bridge.DefaultTokenFile(); err != nil {
			return nil, Step{Reason: "no pairing token: " + err.Error(), Err: err}
		}
	}
	// Reading, never creating: without the file nothing was paired, and
	// waiting would only delay the next way.
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, Step{Reason: "not paired: no token file at " + path + " (run `livetab pair` and paste its URL and token into the extension's popup)", Err: fmt.Errorf("livetab: no token file at %s: %w", path, bridge.ErrNotConnected)}
	}
	bctx, bcancel := context.WithCancel(ctx)
	b, err := bridge.Listen(bctx, bridge.Options{Addr: o.BridgeAddr, TokenFile: path, Logger: o.Logger})
	if err != nil {
		bcancel()
		return nil, Step{Reason: fmt.Sprintf("cannot listen on %s for the extension (another livetab holds it?)", o.BridgeAddr), Err: err}
	}
	actx, acancel := extcdp.NewAllocator(bctx, b, extcdp.Options{ClientName: o.ClientName})
	f := &found{actx: actx, bridge: b, cancel: func() {
		acancel()
		b.Close()
		bcancel()
	}, reason: "the extension connected to " + b.URL()}
	wctx, wcancel := context.WithTimeout(ctx, o.ExtensionWait)
	defer wcancel()
	if err := b.WaitConnected(wctx); err != nil {
		st := Step{Reason: fmt.Sprintf("the extension did not dial %s within %s", b.URL(), o.ExtensionWait), Err: err}
		if o.WaitForExtension && ctx.Err() == nil {
			st.keep = f
		} else {
			f.cancel()
		}
		return nil, st
	}
	return f, Step{}
}

func (o Options) native(ctx context.Context) (*found, Step) {
	u, err := NativeURL(o.ProfileDir)
	if err != nil {
		return nil, Step{Reason: nativeReason(err), Err: err}
	}
	actx, cancel := NewNativeAllocator(ctx, u)
	where := o.ProfileDir
	if where == "" {
		where = "a usual profile"
	}
	host := strings.TrimPrefix(u, "ws://")
	if i := strings.IndexByte(host, '/'); i >= 0 {
		host = host[:i]
	}
	return &found{actx: actx, cancel: cancel, reason: fmt.Sprintf("Chrome's remote debugging at %s (%s in %s)", host, ActivePortFile, where)}, Step{}
}

// nativeReason is NativeURL's error without its advice, which ErrNoBrowser
// gives once for all ways.
func nativeReason(err error) string {
	s := strings.TrimPrefix(err.Error(), "livetab: ")
	return strings.TrimSuffix(s, ": "+ErrNoNativeChrome.Error())
}

func (o Options) launch(ctx context.Context) (*found, Step) {
	var lo extension.LaunchOptions
	if o.Launch != nil {
		lo = *o.Launch
	}
	bctx, bcancel := context.WithCancel(ctx)
	// A fresh token in memory: the launched browser is this process's
	// alone, and the person's token file stays untouched.
	b, err := bridge.Listen(bctx, bridge.Options{Addr: "127.0.0.1:0", Token: bridge.NewToken(), Logger: o.Logger})
	if err != nil {
		bcancel()
		return nil, Step{Reason: "cannot listen for the launched browser's extension: " + err.Error(), Err: err}
	}
	sctx, scancel := context.WithTimeout(ctx, launchWait)
	defer scancel()
	br, err := extension.Start(sctx, extension.Config{URL: b.URL(), Token: b.Token()}, lo)
	if err != nil {
		b.Close()
		bcancel()
		return nil, Step{Reason: "launching Chromium failed: " + err.Error(), Err: err}
	}
	b.Watch(br)
	if err := b.WaitConnected(sctx); err != nil {
		br.Close()
		b.Close()
		bcancel()
		return nil, Step{Reason: fmt.Sprintf("the launched Chromium's extension did not connect within %s (without a display, set LaunchOptions.Headless)", launchWait), Err: err}
	}
	actx, acancel := extcdp.NewAllocator(bctx, b, extcdp.Options{ClientName: o.ClientName})
	mode := "windowed"
	if lo.Headless {
		mode = "headless"
	}
	return &found{actx: actx, bridge: b, browser: br, cancel: func() {
		acancel()
		br.Close()
		b.Close()
		bcancel()
	}, reason: "launched a " + mode + " Chromium with the extension"}, Step{}
}
