package page_test

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/internal/browsertest"
	"github.com/livetab/livetab/page"
)

// barPage has a red band along the top edge of the viewport and a blue one
// along the bottom (both fixed), and buttons spread over the height, each
// recording the clicks it gets: a screenshot shifted or cut by the bar, or
// a click landing off by the bar's height, shows.
const barPage = `<!doctype html><html><head><meta charset="utf-8"><title>Bar</title>
<style>
body { margin: 0; height: 3000px; }
#top { position: fixed; left: 0; top: 0; width: 100%; height: 10px; background: #f00; }
#bottom { position: fixed; left: 0; bottom: 0; width: 100%; height: 10px; background: #00f; }
button { position: absolute; left: 200px; width: 160px; height: 30px; }
</style></head><body>
<div id="top"></div><div id="bottom"></div>
<button id="b0" style="top: 20px">Zero</button>
<button id="b1" style="top: 120px">One</button>
<button id="b2" style="top: 300px">Two</button>
<button id="b3" style="top: 500px">Three</button>
<button id="b4" style="top: 600px">Four</button>
<button id="b5" style="top: 640px">Five</button>
<button id="b6" style="top: 820px">Six</button>
<script>
window.hits = [];
addEventListener('click', (e) => hits.push(e.target.id || e.target.tagName));
</script></body></html>`

// barEnv is a windowed Chromium showing Chrome's "started debugging this
// browser" bar, as a person's browser does while livetab drives a tab.
func barEnv(t *testing.T) (*browsertest.Env, string) {
	t.Helper()
	env := browsertest.Start(t, browsertest.Options{Windowed: true, DebuggerBar: true})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, barPage)
	}))
	t.Cleanup(srv.Close)
	return env, srv.URL
}

type viewport struct {
	W, H, OuterH, DPR float64
}

func readViewport(t *testing.T, ctx context.Context) viewport {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[viewport](`({W: innerWidth, H: innerHeight, OuterH: outerHeight, DPR: devicePixelRatio})`))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// waitBar waits until the debugging bar has taken its height from the tab
// of ctx, which emulates no viewport: the browser UI above the page grows
// (the bar slides in, so its height settles over a few frames).
func waitBar(t *testing.T, ctx context.Context) viewport {
	t.Helper()
	var v, last viewport
	stable := 0
	for range 200 {
		v = readViewport(t, ctx)
		// Without the bar, the tab strip and toolbar take under 100 px of
		// the window; the bar adds more than 40.
		if v.OuterH-v.H > 130 && v == last {
			if stable++; stable == 5 {
				return v
			}
		} else {
			stable = 0
		}
		last = v
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the debugging bar did not show, or its height did not settle: innerHeight %v of outerHeight %v", v.H, v.OuterH)
	return v
}

// saveShot keeps an image for a person to look at: go test -artifacts
// keeps the test's artifact directory.
func saveShot(t *testing.T, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(t.ArtifactDir(), name), data, 0o644); err != nil {
		t.Error(err)
	}
}

func near(c color.Color, r, g, b uint8) bool {
	cr, cg, cb, _ := c.RGBA()
	d := func(a uint32, b uint8) bool {
		x := int(a>>8) - int(b)
		return x > -40 && x < 40
	}
	return d(cr, r) && d(cg, g) && d(cb, b)
}

// checkEdges: the red band is the top rows of the image, the blue band its
// bottom rows, so the image is the viewport, neither shifted nor cut.
func checkEdges(t *testing.T, img image.Image, scale float64) {
	t.Helper()
	b := img.Bounds()
	x := b.Dx() / 2
	band := int(10 * scale)
	for _, c := range []struct {
		y       int
		r, g, b uint8
		what    string
	}{
		{0, 255, 0, 0, "top row"},
		{band - 1, 255, 0, 0, "last row of the top band"},
		{band + 1, 255, 255, 255, "row under the top band"},
		{b.Dy() - band, 0, 0, 255, "first row of the bottom band"},
		{b.Dy() - 1, 0, 0, 255, "bottom row"},
		{b.Dy() - band - 2, 255, 255, 255, "row above the bottom band"},
	} {
		if got := img.At(x, c.y); !near(got, c.r, c.g, c.b) {
			t.Errorf("%s (y %d of %d): %v, want rgb(%d,%d,%d)", c.what, c.y, b.Dy(), got, c.r, c.g, c.b)
		}
	}
}

// clickMarks clicks, with raw mouse events at the coordinates a marked
// screenshot gives (the centre of each mark's box), every button the
// snapshot lists, and checks that each click hit that button.
func clickMarks(t *testing.T, ctx context.Context, snap *page.Snapshot) int {
	t.Helper()
	n := 0
	for _, e := range snap.Elements {
		if e.Role != "button" {
			continue
		}
		x, y := e.Box.X+e.Box.Width/2, e.Box.Y+e.Box.Height/2
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[int](`hits.length = 0`)); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.MouseClickXY(x, y)); err != nil {
			t.Fatal(err)
		}
		hits, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`hits`))
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"Zero": "b0", "One": "b1", "Two": "b2", "Three": "b3", "Four": "b4", "Five": "b5", "Six": "b6"}[e.Name]
		if len(hits) != 1 || hits[0] != want {
			t.Errorf("a click at (%.0f, %.0f), the centre of [%d] %q in the marked screenshot, hit %v, want %s", x, y, e.Index, e.Name, hits, want)
		}
		n++
	}
	return n
}

// TestDebuggerBar drives a tab of a windowed Chromium whose debugging bar
// takes height from the page, as in the person's browser: screenshots are
// the viewport, and coordinates from a marked screenshot hit their element.
func TestDebuggerBar(t *testing.T) {
	env, url := barEnv(t)
	alloc := env.Allocator(t)

	cases := []struct {
		name   string
		opts   []page.Option
		w, h   float64 // the viewport the page must have; 0: the browser's
		clicks int     // buttons the marked screenshot must show
		p      *page.Page
		ctx    context.Context
	}{
		{name: "Emulated", w: page.DefaultViewportWidth, h: page.DefaultViewportHeight, clicks: 7},
		{name: "BrowserViewport", opts: []page.Option{page.WithViewport(0, 0)}},
	}
	// The pages come first, as a program's do: the bar shows only once
	// livetab attaches to a tab, and then takes its height from a page
	// that already emulates its viewport.
	for i := range cases {
		tc := &cases[i]
		tctx, cancel := chromedp.NewContext(alloc)
		defer cancel()
		tctx, cancel = context.WithTimeout(tctx, 120*time.Second)
		defer cancel()
		p, err := page.New(tctx, tc.opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if err := p.Navigate(tctx, url); err != nil {
			t.Fatal(err)
		}
		tc.p, tc.ctx = p, tctx
	}

	// A tab of the browser's own viewport shows when the bar has come.
	own, cancel := chromedp.NewContext(alloc)
	defer cancel()
	own, cancel = context.WithTimeout(own, 90*time.Second)
	defer cancel()
	if err := chromedp.Do(own, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	bar := waitBar(t, own)
	t.Logf("with the bar: innerWidth %v, innerHeight %v of outerHeight %v, devicePixelRatio %v", bar.W, bar.H, bar.OuterH, bar.DPR)

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, tctx := tc.p, tc.ctx
			v := readViewport(t, tctx)
			w, h := tc.w, tc.h
			if w == 0 {
				// This tab's window may not be the first one's.
				v = waitBar(t, tctx)
				w, h = v.W, v.H
			}
			t.Logf("viewport %vx%v of a window %v high", v.W, v.H, v.OuterH)
			if v.W != w || v.H != h {
				t.Errorf("viewport %vx%v, want %vx%v", v.W, v.H, w, h)
			}

			for _, scroll := range []int{0, 150} {
				name := fmt.Sprintf("%s-scroll%d", tc.name, scroll)
				if _, err := chromedp.Run(tctx, chromedp.Evaluate[int](fmt.Sprintf(`scrollTo(0, %d), scrollY`, scroll))); err != nil {
					t.Fatal(err)
				}
				shot, err := p.Screenshot(tctx, page.ScreenshotOptions{})
				if err != nil {
					t.Fatal(err)
				}
				saveShot(t, name+"-screenshot.png", shot.Data)
				if float64(shot.Width) != w*v.DPR || float64(shot.Height) != h*v.DPR {
					t.Errorf("%s: screenshot %dx%d, want the viewport %vx%v", name, shot.Width, shot.Height, w*v.DPR, h*v.DPR)
				}
				checkEdges(t, decode(t, shot), v.DPR)

				marked, snap, err := p.MarkedScreenshot(tctx, page.ScreenshotOptions{}, page.SnapshotOptions{})
				if err != nil {
					t.Fatal(err)
				}
				saveShot(t, name+"-marked.png", marked.Data)
				if snap.Viewport.Width != w || snap.Viewport.Height != h || snap.Viewport.Y != float64(scroll) {
					t.Errorf("%s: the marked screenshot's snapshot has viewport %+v, want %vx%v at y %d", name, snap.Viewport, w, h, scroll)
				}
				if float64(marked.Width) != w*v.DPR || float64(marked.Height) != h*v.DPR {
					t.Errorf("%s: marked screenshot %dx%d, want the viewport %vx%v", name, marked.Width, marked.Height, w*v.DPR, h*v.DPR)
				}
				n := clickMarks(t, tctx, snap)
				if tc.clicks > 0 && scroll == 0 && n != tc.clicks {
					t.Errorf("%s: clicked %d buttons of the marked screenshot, want %d: %+v", name, n, tc.clicks, snap.Elements)
				}
				if n == 0 {
					t.Errorf("%s: the marked screenshot lists no button", name)
				}
			}
			if _, err := chromedp.Run(tctx, chromedp.Evaluate[int](`scrollTo(0, 0), scrollY`)); err != nil {
				t.Fatal(err)
			}
			snap, err := p.Snapshot(tctx, page.SnapshotOptions{})
			if err != nil {
				t.Fatal(err)
			}

			// The lowest button, below what the window shows when the
			// tab emulates a taller viewport: its own screenshot is it.
			for _, e := range snap.Elements {
				if e.Name != "Six" {
					continue
				}
				img, err := p.Screenshot(tctx, page.ScreenshotOptions{Ref: page.Ref{Index: e.Index}})
				if err != nil {
					t.Fatal(err)
				}
				saveShot(t, tc.name+"-six.png", img.Data)
				m := decode(t, img)
				if r, g, b, _ := m.At(4, img.Height/2).RGBA(); img.Width != int(160*v.DPR) || img.Height != int(30*v.DPR) || r>>8 == 255 && g>>8 == 255 && b>>8 == 255 {
					t.Errorf("the screenshot of the button Six is %dx%d with %v at its left edge, want 160x30 of a button", img.Width, img.Height, m.At(4, img.Height/2))
				}
			}

			// page's own click, by the index the marks show.
			for _, e := range snap.Elements {
				if e.Name != "Four" {
					continue
				}
				if _, err := chromedp.Run(tctx, chromedp.Evaluate[int](`hits.length = 0`)); err != nil {
					t.Fatal(err)
				}
				if err := p.Click(tctx, page.Ref{Index: e.Index}, page.ClickOptions{}); err != nil {
					t.Fatal(err)
				}
				hits, err := chromedp.Run(tctx, chromedp.Evaluate[[]string](`hits`))
				if err != nil {
					t.Fatal(err)
				}
				if strings.Join(hits, ",") != "b4" {
					t.Errorf("page.Click on [%d] Four hit %v, want b4", e.Index, hits)
				}
			}

			// Right after a load, before Chrome has painted what the
			// window does not show: the capture paints it.
			for i := range 10 {
				if err := p.Navigate(tctx, fmt.Sprintf("%s/?load=%d", url, i)); err != nil {
					t.Fatal(err)
				}
				shot, err := p.Screenshot(tctx, page.ScreenshotOptions{})
				if err != nil {
					t.Fatal(err)
				}
				m := decode(t, shot)
				if r, g, b, _ := m.At(shot.Width/2, shot.Height-1).RGBA(); r>>8 > 40 || g>>8 > 40 || b>>8 < 215 {
					saveShot(t, fmt.Sprintf("%s-load%d.png", tc.name, i), shot.Data)
					t.Errorf("load %d: the bottom row of the screenshot is %v, not the blue band: the capture is not the viewport", i, m.At(shot.Width/2, shot.Height-1))
				}
			}
		})
	}
}
