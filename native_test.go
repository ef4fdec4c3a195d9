package livetab_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab"
	"github.com/livetab/livetab/extension"
	"github.com/livetab/livetab/internal/browsertest"
	"github.com/livetab/livetab/livetabcdp"
)

// TestNative drives a Chromium started with --remote-debugging-port=0, as
// Chrome's own remote debugging offers it, through ConnectNative.
func TestNative(t *testing.T) {
	browsertest.RequireChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>native</title><p id="p">hello</p>`)
	}))
	defer site.Close()

	// Launch needs an extension; this one dials nowhere, which is harmless.
	ext := filepath.Join(t.TempDir(), "ext")
	if err := extension.Write(ext, extension.Config{URL: "ws://127.0.0.1:9/extension", Token: "unused"}); err != nil {
		t.Fatal(err)
	}
	br, err := extension.Launch(ctx, ext, extension.LaunchOptions{Headless: true, DebugPort: true})
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	user, err := (&browsertest.Env{Browser: br}).User(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer user.Close()
	open := func(t *testing.T, id string) bool {
		t.Helper()
		ts, err := user.Targets(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(ts, func(ti browsertest.TargetInfo) bool { return ti.TargetID == id })
	}

	t.Run("URL", func(t *testing.T) {
		u, err := livetab.NativeURL(br.UserDataDir)
		if err != nil || u != br.DebugURL {
			t.Fatalf("NativeURL = %q, %v; want %q", u, err, br.DebugURL)
		}
	})

	t.Run("ClosingRule", func(t *testing.T) {
		userTab, err := user.OpenTab(ctx, site.URL+"/?user")
		if err != nil {
			t.Fatal(err)
		}
		actx, acancel, err := livetab.ConnectNative(ctx, br.UserDataDir)
		if err != nil {
			t.Fatal(err)
		}
		defer acancel()

		// One connection: bctx's browser, shared by its children.
		bctx, bcancel := chromedp.NewContext(actx)
		defer bcancel()
		if err := chromedp.Do(bctx, chromedp.Navigate(site.URL+"/?base")); err != nil {
			t.Fatal(err)
		}
		base := string(chromedp.FromContext(bctx).Target.TargetID)

		// The user's tab: attach, work, cancel — it stays.
		tctx, _ := chromedp.NewContext(bctx, chromedp.WithTargetID(target.ID(userTab)))
		text, err := chromedp.Run(tctx, chromedp.Text(chromedp.CSS("#p")))
		if err != nil || text != "hello" {
			t.Fatalf("reading the user's tab: %q, %v", text, err)
		}
		start := time.Now()
		if err := chromedp.Cancel(tctx); err != nil {
			t.Errorf("cancelling the user's tab: %v", err)
		}
		// The guard hides the spared tab from getTargets for a moment
		// (internal/hidden): chromedp, polling for it to go, returns at
		// once instead of after its 500 ms bound.
		if d := time.Since(start); d >= 500*time.Millisecond {
			t.Errorf("cancelling the user's tab took %v: chromedp waited out its bound for a tab that stays", d)
		}
		if !open(t, userTab) {
			t.Fatal("cancelling a context attached to the user's tab closed it")
		}
		// For a moment this connection no longer lists the tab, so that
		// chromedp's wait for it to go ends at once.
		infos, err := chromedp.Targets(bctx)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(infos, func(i *target.Info) bool { return string(i.TargetID) == userTab }) {
			t.Error("the spared tab is still listed to this connection right after the cancel")
		}

		// A tab of this connection's own: cancel closes it.
		octx, _ := chromedp.NewContext(bctx)
		if err := chromedp.Do(octx, chromedp.Navigate(site.URL+"/?own")); err != nil {
			t.Fatal(err)
		}
		own := string(chromedp.FromContext(octx).Target.TargetID)
		if err := chromedp.Cancel(octx); err != nil {
			t.Error(err)
		}
		if open(t, own) {
			t.Error("cancelling a context left open the tab it created")
		}

		// Closing the user's tab on purpose.
		b := chromedp.FromContext(bctx).Browser
		if _, err := cdp.Call(ctx, b, livetabcdp.CloseTab, livetabcdp.CloseTabParams{TargetID: target.ID(userTab)}); err != nil {
			t.Fatal(err)
		}
		for open(t, userTab) {
			if ctx.Err() != nil {
				t.Fatal("Livetab.closeTab left the user's tab open")
			}
			time.Sleep(10 * time.Millisecond)
		}
		// The rest of the Livetab domain is the extension's: Chrome's own
		// answer tells the caller to fall back.
		if _, err := cdp.Call(ctx, b, livetabcdp.GetTabs, cdp.Empty{}); !livetabcdp.IsUnsupported(err) {
			t.Errorf("Livetab.getTabs over the native backend: %v, want method not found", err)
		}

		if err := chromedp.Cancel(bctx); err != nil {
			t.Error(err)
		}
		if open(t, base) {
			t.Error("cancelling the first context left its tab open")
		}
	})

	t.Run("AllocatorCancel", func(t *testing.T) {
		userTab, err := user.OpenTab(ctx, site.URL+"/?user2")
		if err != nil {
			t.Fatal(err)
		}
		actx, acancel, err := livetab.ConnectNative(ctx, br.UserDataDir)
		if err != nil {
			t.Fatal(err)
		}
		octx, _ := chromedp.NewContext(actx)
		if err := chromedp.Do(octx, chromedp.Navigate(site.URL+"/?own2")); err != nil {
			t.Fatal(err)
		}
		own := string(chromedp.FromContext(octx).Target.TargetID)
		tctx, _ := chromedp.NewContext(octx, chromedp.WithTargetID(target.ID(userTab)))
		if _, err := chromedp.Run(tctx, chromedp.Title()); err != nil {
			t.Fatal(err)
		}
		// The whole connection: its own tab goes, the user's stays.
		acancel()
		chromedp.FromContext(actx).Allocator.Wait()
		if !open(t, userTab) {
			t.Error("cancelling the allocator closed the user's tab")
		}
		if open(t, own) {
			t.Error("cancelling the allocator left its own tab open")
		}
	})

	t.Run("DefaultProfileDirs", func(t *testing.T) {
		h := t.TempDir()
		t.Setenv("HOME", h)
		t.Setenv("XDG_CONFIG_HOME", filepath.Join(h, ".config"))
		dirs := livetab.ChromeProfileDirs()
		if len(dirs) < 2 {
			t.Fatalf("ChromeProfileDirs = %v", dirs)
		}
		if _, err := livetab.NativeURL(""); !errors.Is(err, livetab.ErrNoNativeChrome) || !strings.Contains(err.Error(), "chrome://inspect/#remote-debugging") {
			t.Errorf("no Chrome: %v, want ErrNoNativeChrome saying how to turn it on", err)
		}
		// The first profile has a file a crashed Chrome left; the second
		// the live one.
		write := func(dir, content string) {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, livetab.ActivePortFile), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		write(dirs[0], "9\n/devtools/browser/dead\n")
		live, err := os.ReadFile(filepath.Join(br.UserDataDir, livetab.ActivePortFile))
		if err != nil {
			t.Fatal(err)
		}
		write(dirs[1], string(live))
		lock, err := os.Readlink(filepath.Join(br.UserDataDir, "SingletonLock"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(lock, filepath.Join(dirs[1], "SingletonLock")); err != nil {
			t.Fatal(err)
		}
		u, err := livetab.NativeURL("")
		if err != nil || u != br.DebugURL {
			t.Fatalf("NativeURL(\"\") = %q, %v; want %q", u, err, br.DebugURL)
		}
		actx, acancel, err := livetab.ConnectNative(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		defer acancel()
		tctx, tcancel := chromedp.NewContext(actx)
		defer tcancel()
		if err := chromedp.Do(tctx, chromedp.Navigate(site.URL+"/?default")); err != nil {
			t.Fatal(err)
		}

		write(dirs[0], "not a port\n")
		if _, err := livetab.NativeURL(dirs[0]); err == nil {
			t.Error("NativeURL took a damaged DevToolsActivePort")
		}
	})
}
