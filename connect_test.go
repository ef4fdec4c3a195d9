package livetab_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab"
	"github.com/livetab/livetab/bridge"
	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/extension"
	"github.com/livetab/livetab/internal/browsertest"
)

// connectOpts are Options where no way finds anything: a missing endpoint
// file, no token file, an empty profile and a free bridge port. Tests never
// reach the person's own config, profiles or the default port.
func connectOpts(t *testing.T) livetab.Options {
	t.Helper()
	dir := t.TempDir()
	profile := filepath.Join(dir, "profile")
	if err := os.Mkdir(profile, 0o700); err != nil {
		t.Fatal(err)
	}
	return livetab.Options{
		EndpointFile: filepath.Join(dir, "endpoint.json"),
		TokenFile:    filepath.Join(dir, "token"),
		ProfileDir:   profile,
		BridgeAddr:   freeAddr(t),
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// fakeServe answers /livetab/status as a serve does, for the order tests
// that need a serve to be found but never drive it (TestConnectServe drives
// a real one).
func fakeServe(t *testing.T, path string) string {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/livetab/proof" {
			fmt.Fprintf(w, `{"proof":%q}`, bridge.EndpointProof("tok", srv.Listener.Addr().(*net.TCPAddr).Port, r.URL.Query().Get("nonce")))
			return
		}
		if r.URL.Path != "/livetab/status" || r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, `{}`)
	}))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	if err := livetab.WriteEndpoint(path, livetab.Endpoint{URL: "ws://" + host + "/devtools/browser/x?token=tok", HTTP: srv.URL, PID: 42}); err != nil {
		t.Fatal(err)
	}
	return srv.URL
}

// fakeNative writes a DevToolsActivePort naming a port that accepts
// connections, as a Chrome with remote debugging on leaves it.
func fakeNative(t *testing.T, profile string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	port := ln.Addr().(*net.TCPAddr).Port
	if err := os.WriteFile(filepath.Join(profile, livetab.ActivePortFile), fmt.Appendf(nil, "%d\n/devtools/browser/abc\n", port), 0o600); err != nil {
		t.Fatal(err)
	}
	// The "browser" holding the profile and its port is this process.
	host, _ := os.Hostname()
	if err := os.Symlink(host+"-"+strconv.Itoa(os.Getpid()), filepath.Join(profile, "SingletonLock")); err != nil {
		t.Fatal(err)
	}
	return ln.Addr().String()
}

func writeToken(t *testing.T, path, tok string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func steps(t *testing.T, got []livetab.Step, want ...string) {
	t.Helper()
	var s []string
	for _, st := range got {
		s = append(s, st.String())
	}
	if strings.Join(s, "\n") != strings.Join(want, "\n") {
		t.Errorf("skipped:\n%s\nwant:\n%s", strings.Join(s, "\n"), strings.Join(want, "\n"))
	}
}

func mustConnect(t *testing.T, o livetab.Options) (context.Context, *livetab.Connection) {
	t.Helper()
	actx, cancel, err := livetab.Connect(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cancel)
	c := livetab.FromContext(actx)
	if c == nil {
		t.Fatal("FromContext of Connect's context is nil")
	}
	return actx, c
}

// TestConnectOrder finds several ways at once and checks that Connect
// takes the first in its order, and says why it skipped each earlier one.
func TestConnectOrder(t *testing.T) {
	t.Run("ServeFirst", func(t *testing.T) {
		o := connectOpts(t)
		url := fakeServe(t, o.EndpointFile)
		fakeNative(t, o.ProfileDir)
		writeToken(t, o.TokenFile, bridge.NewToken())
		_, c := mustConnect(t, o)
		if c.Way != livetab.WayServe || c.Reason != "livetab serve (pid 42) answers at "+url {
			t.Errorf("chose %s: %q, want serve", c.Way, c.Reason)
		}
		steps(t, c.Skipped)
	})

	t.Run("NativeAfterExtension", func(t *testing.T) {
		o := connectOpts(t)
		native := fakeNative(t, o.ProfileDir)
		writeToken(t, o.TokenFile, bridge.NewToken())
		o.ExtensionWait = 300 * time.Millisecond
		_, c := mustConnect(t, o)
		if c.Way != livetab.WayNative || c.Reason != "Chrome's remote debugging at "+native+" (DevToolsActivePort in "+o.ProfileDir+")" {
			t.Errorf("chose %s: %q, want native", c.Way, c.Reason)
		}
		steps(t, c.Skipped,
			"serve: no endpoint file at "+o.EndpointFile+" (no `livetab serve` runs)",
			"extension: the extension did not dial ws://"+o.BridgeAddr+"/extension within 300ms")
		// The bridge that waited is closed: its port is free again.
		ln, err := net.Listen("tcp", o.BridgeAddr)
		if err != nil {
			t.Errorf("the skipped extension's bridge still holds %s: %v", o.BridgeAddr, err)
		} else {
			ln.Close()
		}
	})

	t.Run("Nothing", func(t *testing.T) {
		o := connectOpts(t)
		_, _, err := livetab.Connect(context.Background(), o)
		var ce *livetab.ConnectError
		if !errors.As(err, &ce) {
			t.Fatalf("err = %v, want a *ConnectError", err)
		}
		for _, want := range []error{livetab.ErrNoBrowser, livetab.ErrNotRunning, bridge.ErrNotConnected, livetab.ErrNoNativeChrome} {
			if !errors.Is(err, want) {
				t.Errorf("err does not wrap %q", want)
			}
		}
		steps(t, ce.Skipped,
			"serve: no endpoint file at "+o.EndpointFile+" (no `livetab serve` runs)",
			"extension: not paired: no token file at "+o.TokenFile+" (run `livetab pair` and paste its URL and token into the extension's popup)",
			"native: no DevToolsActivePort in "+o.ProfileDir,
			"launch: not asked for (set Options.Launch)")
		if !strings.Contains(err.Error(), "chrome://inspect/#remote-debugging") || !strings.Contains(err.Error(), "native: no DevToolsActivePort") {
			t.Errorf("the error says neither what to do nor why: %v", err)
		}
	})

	t.Run("StaleServeAndTakenPort", func(t *testing.T) {
		o := connectOpts(t)
		gone := httptest.NewServer(http.NotFoundHandler())
		gone.Close()
		if err := livetab.WriteEndpoint(o.EndpointFile, livetab.Endpoint{URL: "ws://" + gone.Listener.Addr().String() + "/devtools/browser/x?token=t", HTTP: gone.URL, PID: 7}); err != nil {
			t.Fatal(err)
		}
		writeToken(t, o.TokenFile, bridge.NewToken())
		taken, err := net.Listen("tcp", o.BridgeAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer taken.Close()
		o.Ways = []livetab.Way{livetab.WayServe, livetab.WayExtension}
		_, _, err = livetab.Connect(context.Background(), o)
		var ce *livetab.ConnectError
		if !errors.As(err, &ce) {
			t.Fatalf("err = %v, want a *ConnectError", err)
		}
		steps(t, ce.Skipped,
			"serve: the endpoint file "+o.EndpointFile+" names "+gone.URL+", where nothing answers (serve pid 7 is gone)",
			"extension: cannot listen on "+o.BridgeAddr+" for the extension (another livetab holds it?)",
			"native: not among Options.Ways",
			"launch: not asked for (set Options.Launch)")
	})

	t.Run("WaysKeepTheOrder", func(t *testing.T) {
		o := connectOpts(t)
		fakeServe(t, o.EndpointFile)
		fakeNative(t, o.ProfileDir)
		o.Ways = []livetab.Way{livetab.WayNative, livetab.WayServe}
		_, c := mustConnect(t, o)
		if c.Way != livetab.WayServe {
			t.Errorf("chose %s, want serve: the order is Connect's, not the slice's", c.Way)
		}
		o.Ways = []livetab.Way{livetab.WayNative}
		_, c = mustConnect(t, o)
		if c.Way != livetab.WayNative {
			t.Errorf("chose %s, want native", c.Way)
		}
		steps(t, c.Skipped, "serve: not among Options.Ways", "extension: not among Options.Ways")
	})

	t.Run("Cancelled", func(t *testing.T) {
		o := connectOpts(t)
		writeToken(t, o.TokenFile, bridge.NewToken())
		o.ExtensionWait = time.Minute
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, _, err := livetab.Connect(ctx, o)
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "before trying native") {
			t.Errorf("err = %v, want the context's error before the native way", err)
		}
	})

	t.Run("WaitForExtension", func(t *testing.T) {
		o := connectOpts(t)
		writeToken(t, o.TokenFile, bridge.NewToken())
		o.ExtensionWait = 100 * time.Millisecond
		o.WaitForExtension = true
		_, c := mustConnect(t, o)
		if c.Way != livetab.WayExtension || !c.Waiting || c.Reason != "nothing else answered: waiting for the extension to dial ws://"+o.BridgeAddr+"/extension" {
			t.Errorf("chose %s (waiting %v): %q, want the extension, waiting", c.Way, c.Waiting, c.Reason)
		}
		steps(t, c.Skipped,
			"serve: no endpoint file at "+o.EndpointFile+" (no `livetab serve` runs)",
			"extension: the extension did not dial ws://"+o.BridgeAddr+"/extension within 100ms",
			"native: no DevToolsActivePort in "+o.ProfileDir,
			"launch: not asked for (set Options.Launch)")
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		if err := c.Ready(ctx); !errors.Is(err, bridge.ErrNotConnected) || !strings.Contains(err.Error(), "livetab doctor") {
			t.Errorf("Ready without the extension: %v, want ErrNotConnected saying what to check", err)
		}
	})
}

// browse opens a tab under actx on a page of its own and reads it back.
func browse(t *testing.T, actx context.Context) {
	t.Helper()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>connect</title><p id="p">found</p>`)
	}))
	defer site.Close()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(site.URL)); err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#p").textContent`))
	if err != nil {
		t.Fatal(err)
	}
	if text != "found" {
		t.Errorf("read %q, want found", text)
	}
	if livetab.FromContext(ctx) == nil {
		t.Error("FromContext of a chromedp context under Connect's is nil")
	}
}

// TestConnectServe finds a real serve (a relay's endpoint on the bridge of
// a real extension, as `livetab serve` mounts it) and drives a tab.
func TestConnectServe(t *testing.T) {
	env := browsertest.Start(t, browsertest.Options{DebugPort: true})
	tok := bridge.EndpointToken(env.Bridge.Token())
	h := env.Relay.Handler(extcdp.HandlerOptions{Token: tok})
	names := make(chan string, 10)
	named := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/devtools/browser/") {
			names <- r.URL.Query().Get("client")
		}
		h.ServeHTTP(w, r)
	})
	for _, p := range []string{"/json", "/json/", "/devtools/", "/livetab/"} {
		env.Bridge.Handle(p, named)
	}
	host := env.Bridge.Addr().String()
	o := connectOpts(t)
	if err := livetab.WriteEndpoint(o.EndpointFile, livetab.Endpoint{URL: env.Relay.BrowserURL(host, tok), HTTP: "http://" + host, PID: os.Getpid()}); err != nil {
		t.Fatal(err)
	}
	o.ClientName = "connect test"
	actx, c := mustConnect(t, o)
	if c.Way != livetab.WayServe || c.Reason != fmt.Sprintf("livetab serve (pid %d) answers at http://%s", os.Getpid(), host) {
		t.Errorf("chose %s: %q, want serve", c.Way, c.Reason)
	}
	steps(t, c.Skipped)
	browse(t, actx)
	if n := <-names; n != "connect test" {
		t.Errorf("the serve was told the client's name is %q, want the ClientName", n)
	}
	// The person sees the program under the name it gave.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u, err := env.User(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	popup, err := u.OpenPopup(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := u.WaitPopup(ctx, popup, `document.getElementById('recent').textContent.includes('connect test: Page.navigate')`); err != nil {
		t.Error(err)
	}
}

// TestConnectExtension has a real extension, configured as `livetab pair`
// leaves it, dial the bridge Connect opens.
func TestConnectExtension(t *testing.T) {
	browsertest.RequireChromium(t)
	o := connectOpts(t)
	tok := bridge.NewToken()
	writeToken(t, o.TokenFile, tok)
	// The extension dials before Connect listens, as a person's does:
	// refused, it dials again (at most 5 s later).
	br, err := extension.Start(context.Background(), extension.Config{URL: "ws://" + o.BridgeAddr + "/extension", Token: tok}, extension.LaunchOptions{Headless: true})
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	o.ExtensionWait = 30 * time.Second
	actx, c := mustConnect(t, o)
	if c.Way != livetab.WayExtension || c.Reason != "the extension connected to ws://"+o.BridgeAddr+"/extension" || c.Bridge == nil || c.Waiting {
		t.Errorf("chose %s: %q, want the extension", c.Way, c.Reason)
	}
	steps(t, c.Skipped, "serve: no endpoint file at "+o.EndpointFile+" (no `livetab serve` runs)")
	browse(t, actx)
}

// TestConnectNative finds a Chromium's own remote debugging through the
// DevToolsActivePort in its profile.
func TestConnectNative(t *testing.T) {
	browsertest.RequireChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ext := filepath.Join(t.TempDir(), "ext")
	if err := extension.Write(ext, extension.Config{URL: "ws://127.0.0.1:9/extension", Token: "unused"}); err != nil {
		t.Fatal(err)
	}
	br, err := extension.Launch(ctx, ext, extension.LaunchOptions{Headless: true, DebugPort: true})
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	o := connectOpts(t)
	o.ProfileDir = br.UserDataDir
	actx, c := mustConnect(t, o)
	host := strings.TrimPrefix(br.DebugURL, "ws://")
	host = host[:strings.IndexByte(host, '/')]
	if c.Way != livetab.WayNative || c.Reason != "Chrome's remote debugging at "+host+" (DevToolsActivePort in "+br.UserDataDir+")" {
		t.Errorf("chose %s: %q, want native", c.Way, c.Reason)
	}
	steps(t, c.Skipped,
		"serve: no endpoint file at "+o.EndpointFile+" (no `livetab serve` runs)",
		"extension: not paired: no token file at "+o.TokenFile+" (run `livetab pair` and paste its URL and token into the extension's popup)")
	browse(t, actx)
}

// TestConnectLaunch asks for a launch, the last way, and checks that
// cancelling closes the browser Connect started.
func TestConnectLaunch(t *testing.T) {
	browsertest.RequireChromium(t)
	o := connectOpts(t)
	o.Launch = &extension.LaunchOptions{Headless: true}
	actx, cancel, err := livetab.Connect(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	c := livetab.FromContext(actx)
	if c.Way != livetab.WayLaunch || c.Reason != "launched a headless Chromium with the extension" || c.Browser == nil {
		t.Fatalf("chose %s: %q, want launch", c.Way, c.Reason)
	}
	steps(t, c.Skipped,
		"serve: no endpoint file at "+o.EndpointFile+" (no `livetab serve` runs)",
		"extension: not paired: no token file at "+o.TokenFile+" (run `livetab pair` and paste its URL and token into the extension's popup)",
		"native: no DevToolsActivePort in "+o.ProfileDir)
	browse(t, actx)
	cancel()
	select {
	case <-c.Browser.Done():
	case <-time.After(30 * time.Second):
		t.Error("the launched Chromium still runs after cancel")
	}
}
