package extension_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/bridge"
	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/extension"
	"github.com/livetab/livetab/internal/browsertest"
)

// A launched Chromium that dies at start must not leave the program
// waiting for an extension that will never come, with advice to install
// it: the bridge, and the allocator on it, fail at once and say why.
func TestLaunchedChromiumExitIsNoticed(t *testing.T) {
	browsertest.RequireChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := bridge.Listen(ctx, bridge.Options{Addr: "127.0.0.1:0", Token: "t", TokenFile: t.TempDir() + "/token"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// A flag a person could try that makes Chromium exit at once.
	br, err := extension.Start(ctx, extension.Config{URL: b.URL(), Token: b.Token()},
		extension.LaunchOptions{Headless: true, Flags: []string{"--remote-debugging-pipe"}})
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	b.Watch(br)

	start := time.Now()
	err = b.WaitConnected(ctx)
	if err == nil {
		t.Fatal("WaitConnected succeeded with no browser")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("WaitConnected took %v to notice the exit (want < 2 s)", d)
	}
	if !errors.Is(err, extension.ErrExited) || !strings.Contains(err.Error(), "Remote debugging pipe") {
		t.Errorf("error %q should name the exit and Chromium's last words", err)
	}
	if strings.Contains(err.Error(), "install it") {
		t.Errorf("error %q gives install advice for a browser livetab launched", err)
	}

	start = time.Now()
	allocCtx, cancelA := extcdp.NewAllocator(ctx, b)
	defer cancelA()
	tabCtx, cancelT := chromedp.NewContext(allocCtx)
	defer cancelT()
	err = chromedp.Do(tabCtx)
	if err == nil || !errors.Is(err, extension.ErrExited) {
		t.Errorf("chromedp.Run = %v, want the exit", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the allocator took %v to fail (want < 2 s)", d)
	}
}

// URLs among the flags are start pages: headless Chromium opens only one,
// so more than one is refused before anything starts.
func TestLaunchStartPages(t *testing.T) {
	browsertest.RequireChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	if err := extension.Write(dir, extension.Config{URL: "ws://127.0.0.1:1/", Token: "t"}); err != nil {
		t.Fatal(err)
	}
	_, err := extension.Launch(ctx, dir, extension.LaunchOptions{Headless: true, Flags: []string{"data:text/html,a", "data:text/html,b"}})
	if err == nil || !strings.Contains(err.Error(), "one start page") {
		t.Fatalf("two start pages headless: err = %v", err)
	}
	br, err := extension.Launch(ctx, dir, extension.LaunchOptions{Headless: true, DebugPort: true, Flags: []string{"data:text/html,<title>start</title>"}})
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	// The debugging port's own list: a chromedp context would open a tab.
	list := "http://" + strings.Split(strings.TrimPrefix(br.DebugURL, "ws://"), "/")[0] + "/json/list"
	var titles []string
	var last string
	for range 50 {
		resp, err := http.Get(list)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		var ts []struct {
			Type  string `json:"type"`
			Title string `json:"title"`
		}
		if err == nil {
			err = jsonv2.Unmarshal(body, &ts)
		}
		if err != nil {
			t.Fatal(err)
		}
		titles = titles[:0]
		for _, x := range ts {
			if x.Type == "page" {
				titles = append(titles, x.Title)
			}
		}
		if len(titles) == 1 && titles[0] == "start" {
			return
		}
		last = string(body)
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("page titles %q, want one start page (list %s)", titles, last)
}
