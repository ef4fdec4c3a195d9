package extcdp_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/extension"
	"github.com/livetab/livetab/internal/browsertest"
	"github.com/livetab/livetab/internal/testsite"
)

var (
	env  *browsertest.Env
	site *testsite.Site
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	site = testsite.Start()
	defer site.Close()
	if fuzzing() {
		return m.Run() // the fuzz targets use a fake extension
	}
	if _, err := extension.FindChromium(); err != nil && os.Getenv("CI") == "" {
		fmt.Println("no Chromium: the end-to-end tests skip (under CI they fail)")
		return m.Run()
	}
	var err error
	env, err = browsertest.StartEnv(browsertest.Options{SitePerProcess: true, DebugPort: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the test browser:", err)
		return 1
	}
	defer env.Close()
	defer closeWindowed()
	return m.Run()
}

// newTab opens a livetab tab for one test.
func newTab(t *testing.T) context.Context {
	t.Helper()
	if env == nil {
		browsertest.RequireChromium(t)
	}
	actx := env.Allocator(t)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancel2 := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(cancel2)
	return ctx
}

func TestNavigateQueryInput(t *testing.T) {
	ctx := newTab(t)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(site.URL+"/form"),
		chromedp.WaitVisible(chromedp.CSS("#btn")),
		chromedp.Click(chromedp.CSS("#btn")),
		chromedp.SendKeys(chromedp.CSS("#name"), "Ada"),
	); err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(ctx, chromedp.Title())
	if err != nil || title != "form page" {
		t.Fatalf("title %q %v", title, err)
	}
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#content")))
	if err != nil || text != "clicked" {
		t.Fatalf("text after click %q %v", text, err)
	}
	val, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS("#name")))
	if err != nil || val != "Ada" {
		t.Fatalf("value %q %v", val, err)
	}
	html, err := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("#content")))
	if err != nil || html != `<h1 id="content">clicked</h1>` {
		t.Fatalf("outer HTML %q %v", html, err)
	}
	sum, err := chromedp.Run(ctx, chromedp.Evaluate[int](`20 + 22`))
	if err != nil || sum != 42 {
		t.Fatalf("evaluate %d %v", sum, err)
	}
}

func decode(t *testing.T, b []byte) image.Image {
	t.Helper()
	img, _, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("decoding the screenshot: %v", err)
	}
	return img
}

func TestScreenshots(t *testing.T) {
	ctx := newTab(t)
	if err := chromedp.Do(ctx,
		chromedp.EmulateViewport(800, 600),
		chromedp.Navigate(site.URL+"/form"),
		chromedp.WaitVisible(chromedp.CSS("#btn")),
	); err != nil {
		t.Fatal(err)
	}
	vp, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if b := decode(t, vp).Bounds(); b.Dx() != 800 || b.Dy() != 600 {
		t.Fatalf("viewport screenshot %v, want 800x600", b)
	}
	el, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS("#btn")))
	if err != nil {
		t.Fatal(err)
	}
	box, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]float64](`(() => { const r = document.getElementById('btn').getBoundingClientRect(); return {w: r.width, h: r.height} })()`))
	if err != nil {
		t.Fatal(err)
	}
	if b := decode(t, el).Bounds(); abs(float64(b.Dx())-box["w"]) > 2 || abs(float64(b.Dy())-box["h"]) > 2 {
		t.Fatalf("element screenshot %v, element %v", b, box)
	}
	full, err := chromedp.Run(ctx, chromedp.FullScreenshot(90))
	if err != nil {
		t.Fatal(err)
	}
	if b := decode(t, full).Bounds(); b.Dy() < 3000 {
		t.Fatalf("full screenshot %v, want the whole 3000+ px page", b)
	}
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

func TestUploadFiles(t *testing.T) {
	ctx := newTab(t)
	path := filepath.Join(t.TempDir(), "hello.txt")
	content := []byte("uploaded through livetab\n")
	os.WriteFile(path, content, 0o644)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(site.URL+"/upload"),
		chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{path}),
	); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById('status').textContent === 'sent 25 200'`)); err != nil {
		t.Fatal(err)
	}
	got := site.Received("hello.txt")
	if !bytes.Equal(got, content) {
		t.Fatalf("server received %q", got)
	}
}

func TestFrames(t *testing.T) {
	ctx := newTab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(site.URL+"/frames")); err != nil {
		t.Fatal(err)
	}
	// Same origin: query inside the iframe's document.
	nodes, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSS("#same"), chromedp.NodeReady, chromedp.Populate(1, false)))
	if err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#inner"), chromedp.FromNode(nodes[0].ContentDocument)))
	if err != nil || text != "inside the frame" {
		t.Fatalf("same-origin frame text %q %v", text, err)
	}
	// Cross origin: an out-of-process iframe, reached by its target id.
	var frameID target.ID
	deadline := time.Now().Add(10 * time.Second)
	for frameID == "" && time.Now().Before(deadline) {
		infos, err := chromedp.Targets(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, info := range infos {
			if info.Type == "iframe" && strings.HasPrefix(info.URL, site.CrossURL) {
				frameID = info.TargetID
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if frameID == "" {
		t.Fatal("the cross-origin iframe is not listed as a target")
	}
	fctx, cancel := chromedp.NewContext(ctx, chromedp.WithTargetID(frameID))
	text, err = chromedp.Run(fctx, chromedp.Text(chromedp.CSS("#inner")))
	if err != nil || text != "inside the frame" {
		t.Fatalf("cross-origin frame text %q %v", text, err)
	}
	cancel()
	// Cancelling the iframe's context must not close its page.
	title, err := chromedp.Run(ctx, chromedp.Title())
	if err != nil || title != "frames" {
		t.Fatalf("the page after the frame's context ended: %q %v", title, err)
	}
}

func TestTwoTabsConcurrently(t *testing.T) {
	a, b := newTab(t), newTab(t)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, ctx := range []context.Context{a, b} {
		wg.Go(func() {
			name := fmt.Sprintf("tab%d", i)
			for j := range 10 {
				if err := chromedp.Do(ctx, chromedp.Navigate(site.URL+"/form")); err != nil {
					errs[i] = err
					return
				}
				v := fmt.Sprintf("%s-%d", name, j)
				if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#name"), v)); err != nil {
					errs[i] = err
					return
				}
				got, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS("#name")))
				if err != nil || got != v {
					errs[i] = fmt.Errorf("%s: value %q, want %q (%v)", name, got, v, err)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestPopupWaitNewTarget(t *testing.T) {
	ctx := newTab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(site.URL+"/form")); err != nil {
		t.Fatal(err)
	}
	ch := chromedp.WaitNewTarget(ctx, func(info *target.Info) bool { return strings.Contains(info.URL, "/popup-target") })
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#pop"))); err != nil {
		t.Fatal(err)
	}
	var id target.ID
	select {
	case id = <-ch:
	case <-ctx.Done():
		t.Fatal("no popup target")
	}
	pctx, cancel := chromedp.NewContext(ctx, chromedp.WithTargetID(id))
	defer cancel()
	title, err := chromedp.Run(pctx, chromedp.Title())
	if err != nil || title != "form page" {
		t.Fatalf("popup title %q %v", title, err)
	}
}

// userTab opens a tab as the user would, outside livetab.
func userTab(t *testing.T, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	u, err := env.User(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	id, err := u.OpenTab(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestAttachToUserTabLeavesItOpen(t *testing.T) {
	ctx := newTab(t)
	id := userTab(t, site.URL+"/form?user")
	t.Cleanup(func() {
		u, err := env.User(context.Background())
		if err == nil {
			u.CloseTab(context.Background(), id)
			u.Close()
		}
	})
	infos, err := chromedp.Targets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, info := range infos {
		found = found || string(info.TargetID) == id && info.Type == "page" && strings.HasSuffix(info.URL, "/form?user")
	}
	if !found {
		t.Fatalf("chromedp.Targets does not list the user's tab %s: %v", id, infos)
	}
	uctx, cancel := chromedp.NewContext(ctx, chromedp.WithTargetID(target.ID(id)))
	if err := chromedp.Do(uctx, chromedp.SendKeys(chromedp.CSS("#name"), "typed")); err != nil {
		t.Fatal(err)
	}
	cancel() // must detach, not close
	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	ts, err := u.Targets(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range ts {
		if ti.TargetID == id {
			if !strings.HasSuffix(ti.URL, "/form?user") {
				t.Fatalf("the user's tab moved to %s", ti.URL)
			}
			return
		}
	}
	t.Fatal("cancelling the context closed the user's tab")
}

func TestUserClosesTab(t *testing.T) {
	ctx := newTab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(site.URL+"/form")); err != nil {
		t.Fatal(err)
	}
	id := chromedp.FromContext(ctx).Target.TargetID
	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	if err := u.CloseTab(context.Background(), string(id)); err != nil {
		t.Fatal(err)
	}
	detached, err := chromedp.Detached(ctx)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-detached:
	case <-time.After(10 * time.Second):
		t.Fatal("the context did not learn that its tab was closed")
	}
	_, err = chromedp.Run(ctx, chromedp.Evaluate[int](`1`))
	if err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("a call on the closed tab: %v", err)
	}
}

func TestWorkerRestart(t *testing.T) {
	ctx := newTab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(site.URL+"/form")); err != nil {
		t.Fatal(err)
	}
	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	// A call in flight when the worker dies fails at once, not after a
	// timeout.
	errc := make(chan error, 1)
	go func() {
		_, err := chromedp.Call(ctx, runtime.Evaluate, runtime.EvaluateParams{Expression: `new Promise(r => setTimeout(r, 5000))`, AwaitPromise: new(true)})
		errc <- err
	}()
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	if err := u.StopWorker(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "disconnected") {
			t.Fatalf("in-flight call: %v", err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Fatalf("the in-flight call took %v to fail", d)
		}
	case <-time.After(4 * time.Second):
		t.Fatal("the in-flight call hangs after the worker stopped")
	}
	// Wake the worker the way Chrome does: with an event it listens to.
	wake, err := u.OpenTab(context.Background(), "about:blank")
	if err != nil {
		t.Fatal(err)
	}
	defer u.CloseTab(context.Background(), wake)
	sum, err := chromedp.Run(ctx, chromedp.Evaluate[int](`40 + 2`))
	if err != nil || sum != 42 {
		t.Fatalf("after the worker restarted: %d %v", sum, err)
	}
}

func TestDownloadEvents(t *testing.T) {
	ctx := newTab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(site.URL+"/form")); err != nil {
		t.Fatal(err)
	}
	b := chromedp.FromContext(ctx).Browser
	progress := chromedp.BrowserEvents(ctx, browser.DownloadProgress)
	begin := chromedp.BrowserEvents(ctx, browser.DownloadWillBegin)
	if _, err := cdp.Call(ctx, b, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: t.TempDir(), EventsEnabled: new(true),
	}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`(() => { const a = document.createElement('a'); a.href = '/download'; document.body.append(a); a.click() })()`)); err != nil {
		t.Fatal(err)
	}
	var guid string
	for ev, err := range begin {
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(ev.URL, "/download") {
			guid = ev.GUID
			break
		}
	}
	for ev, err := range progress {
		if err != nil {
			t.Fatal(err)
		}
		if ev.GUID != guid || ev.State != browser.DownloadProgressStateCompleted {
			continue
		}
		got, err := os.ReadFile(ev.FilePath)
		if err != nil {
			t.Fatalf("reading the downloaded file: %v", err)
		}
		os.Remove(ev.FilePath)
		if !bytes.Equal(got, testsite.DownloadBody) {
			t.Fatalf("the downloaded file has %d bytes, want %d", len(got), len(testsite.DownloadBody))
		}
		return
	}
}
