package extcdp_test

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/browsertest"
	"github.com/livetab/livetab/internal/wire"
)

// A screenshot is as large as a client asks: a clip, its scale, the device
// scale factor and the viewport a client emulates multiply. Measured on the
// client's own tab (docs/decisions/2026-11-27-sizes-and-scales-are-bounded.md):
// a 100,000 px square clip, a 1,000,000 px tall page at scale 10, or a
// 1920×1080 viewport at device scale 20 made the whole browser exit, through
// chrome.debugger and Chrome's own port alike; after a 10,000,000 px
// viewport (Emulation.setDeviceMetricsOverride or setVisibleSize) or a
// viewport scaled 1000 times, the screenshot was never answered and the
// tab took none again. The relay refuses a screenshot past what it bounds,
// at once and saying the bound, and the browser and the tab answer on.
func TestRedTeamHugeScreenshotsCrashNoBrowser(t *testing.T) {
	if env == nil {
		browsertest.RequireChromium(t)
	}
	type step struct {
		method string
		params map[string]any
	}
	shot := step{"Page.captureScreenshot", map[string]any{"format": "png"}}
	metrics := func(p map[string]any) step {
		for k, v := range map[string]any{"width": 800, "height": 600, "deviceScaleFactor": 1, "mobile": false} {
			if _, ok := p[k]; !ok {
				p[k] = v
			}
		}
		return step{"Emulation.setDeviceMetricsOverride", p}
	}
	clip := func(w, h, scale float64) map[string]any {
		return map[string]any{"x": 0, "y": 0, "width": w, "height": h, "scale": scale}
	}
	e := startCrashEnv(t)
	for _, tc := range []struct {
		name  string
		tall  bool
		steps []step
	}{
		{"clip", false, []step{{"Page.captureScreenshot", map[string]any{"format": "png", "clip": clip(100000, 100000, 1)}}}},
		{"tallScaled", true, []step{{"Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true, "clip": clip(800, 1000000, 10)}}}},
		{"deviceScale", false, []step{metrics(map[string]any{"width": 1920, "height": 1080, "deviceScaleFactor": 20}), shot}},
		{"hugeViewport", false, []step{metrics(map[string]any{"width": 10000000, "height": 10000000}), shot}},
		{"viewportScale", false, []step{metrics(map[string]any{"viewport": map[string]any{"x": 0, "y": 0, "width": 800, "height": 600, "scale": 1000}}), shot}},
		{"visibleSize", false, []step{{"Emulation.setVisibleSize", map[string]any{"width": 10000000, "height": 10000000}}, shot}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.ensure(t)
			c := dialCDP(t, e.url)
			c.bound = 15 * time.Second
			tid, sid := c.newTab(t, site.URL+"/form?size-"+tc.name)
			defer c.send("", "Target.closeTarget", map[string]any{"targetId": tid})
			if tc.tall {
				if _, err := c.evalJSON(sid, "document.body.style.height = '1000000px'"); err != nil {
					t.Fatal(err)
				}
			}
			refused := ""
			for _, s := range tc.steps {
				m, err := c.send(sid, s.method, s.params)
				if err != nil {
					t.Errorf("%s: %v, want an answer", s.method, err)
					break
				}
				if m.Error != nil {
					refused = m.Error.Message
					break
				}
			}
			time.Sleep(time.Second) // a crash takes a moment to show
			e.alive(t)
			if !strings.Contains(refused, "livetab refuses") || !strings.Contains(refused, "at most") {
				t.Errorf("answered %q, want livetab's refusal saying the bound", refused)
			}
			if v, err := c.evalJSON(sid, "6*7"); err != nil || v != "42" {
				t.Errorf("the tab afterwards: %q %v", v, err)
			}
		})
	}
}

// The screenshots Playwright, Puppeteer and chromedp take of ordinary pages
// pass the bound: the viewport, a full page of a long page (its clip
// beyond the viewport), and both on a high-density display.
func TestScreenshotsOfOrdinaryPagesPass(t *testing.T) {
	if env == nil {
		browsertest.RequireChromium(t)
	}
	c := dialRaw(t)
	tid, sid := c.newTab(t, site.URL+"/form?size-ordinary")
	defer c.send("", "Target.closeTarget", map[string]any{"targetId": tid})
	if _, err := c.evalJSON(sid, "document.body.style.height = '20000px'"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name          string
		dsf           float64
		params        map[string]any
		width, height uint32
	}{
		{"viewport", 1, map[string]any{"format": "png"}, 1280, 800},
		{"fullPage", 1, map[string]any{"format": "png", "captureBeyondViewport": true, "clip": map[string]any{"x": 0, "y": 0, "width": 1280, "height": 20000, "scale": 1}}, 1280, 20000},
		{"retinaViewport", 2, map[string]any{"format": "jpeg"}, 2560, 1600},
		{"retinaFullPage", 2, map[string]any{"format": "png", "captureBeyondViewport": true, "clip": map[string]any{"x": 0, "y": 0, "width": 1280, "height": 10000, "scale": 1}}, 2560, 20000},
	} {
		c.must(sid, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 1280, "height": 800, "deviceScaleFactor": tc.dsf, "mobile": false})
		res, err := c.call(sid, "Page.captureScreenshot", tc.params)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		var shot struct {
			Data string `json:"data"`
		}
		if err := jsonv2.Unmarshal(res, &shot, wire.Options); err != nil {
			t.Fatal(err)
		}
		img, err := base64.StdEncoding.DecodeString(shot.Data)
		if err != nil {
			t.Fatal(err)
		}
		if tc.params["format"] == "png" {
			if w, h := binary.BigEndian.Uint32(img[16:]), binary.BigEndian.Uint32(img[20:]); w != tc.width || h != tc.height {
				t.Errorf("%s: a %d×%d image, want %d×%d", tc.name, w, h, tc.width, tc.height)
			}
		} else if len(img) < 1000 {
			t.Errorf("%s: %d bytes", tc.name, len(img))
		}
	}
}

// A sender that skips the relay and speaks to the extension directly gets
// the sizes the extension can judge alone refused by its backstop: a clip
// too large at any device pixel ratio, a viewport scaled past 10 times, an
// input event far past any screen, a text past 1 MiB. (A screenshot made huge by the device
// scale factor or the viewport needs the page read first: only the relay
// does that.)
func TestAttackBackstopRefusesSizes(t *testing.T) {
	if env == nil {
		browsertest.RequireChromium(t)
	}
	e := startCrashEnv(t)
	b := e.env.Bridge
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := b.Call(ctx, wire.CreateTab, 0, wire.CreateTabParams{URL: site.URL + "/form?backstop-sizes"})
	if err != nil {
		t.Fatal(err)
	}
	var tab wire.TabInfo
	if err := jsonv2.Unmarshal(res, &tab, wire.Options); err != nil {
		t.Fatal(err)
	}
	defer b.Call(context.Background(), wire.CloseTab, 0, wire.TabParams{TabID: tab.TabID})
	if _, err := b.Call(ctx, wire.Attach, 0, wire.TabParams{TabID: tab.TabID}); err != nil {
		t.Fatal(err)
	}
	defer b.Call(context.Background(), wire.Detach, 0, wire.TabParams{TabID: tab.TabID})
	for i, tc := range []struct {
		method string
		params map[string]any
	}{
		{"Page.captureScreenshot", map[string]any{"clip": map[string]any{"x": 0, "y": 0, "width": 1920, "height": 1080, "scale": 20}}},
		{"Page.captureScreenshot", map[string]any{"clip": map[string]any{"x": 0, "y": 0, "width": 100000, "height": 100000, "scale": 1}}},
		{"Emulation.setDeviceMetricsOverride", map[string]any{"width": 800, "height": 600, "deviceScaleFactor": 1, "mobile": false,
			"viewport": map[string]any{"x": 0, "y": 0, "width": 800, "height": 600, "scale": 1000}}},
		{"Input.dispatchMouseEvent", map[string]any{"type": "mouseMoved", "x": 1e308, "y": 1}},
		{"Input.dispatchTouchEvent", map[string]any{"type": "touchStart", "touchPoints": []any{map[string]any{"x": 1, "y": -1e308}}}},
		{"Input.insertText", map[string]any{"text": strings.Repeat("x", 2<<20)}},
	} {
		cctx, ccancel := context.WithTimeout(ctx, 8*time.Second)
		_, err := b.Call(cctx, tc.method, tab.TabID, tc.params)
		ccancel()
		time.Sleep(time.Second) // a crash takes a moment to show
		e.alive(t)
		if err == nil || !strings.Contains(err.Error(), "livetab refuses") {
			t.Errorf("%s (case %d) straight to the extension: %v, want its refusal", tc.method, i, err)
		}
	}
	// What is within the bounds goes on.
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := b.Call(ctx, "Emulation.setDeviceMetricsOverride", tab.TabID, map[string]any{"width": 800, "height": 600, "deviceScaleFactor": 2, "mobile": false,
		"viewport": map[string]any{"x": 0, "y": 0, "width": 800, "height": 600, "scale": 2}}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Call(ctx, "Input.dispatchMouseEvent", tab.TabID, map[string]any{"type": "mouseMoved", "x": 10, "y": 10}); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkScreenshotGuard is a viewport screenshot through the relay, which
// reads the page's size first, beside that read alone (the two commands the
// guard sends): the guard's share of a screenshot.
func BenchmarkScreenshotGuard(b *testing.B) {
	if env == nil {
		b.Skip("no test browser")
	}
	srv, tok := endpoint(b)
	c := dialRawURL(b, env.Relay.BrowserURL(strings.TrimPrefix(srv.URL, "http://"), tok))
	ct := c.must("", "Target.createTarget", map[string]any{"url": site.URL + "/form?bench-shot"})
	defer c.send("", "Target.closeTarget", map[string]any{"targetId": field(ct, "targetId")})
	sid := field(c.must("", "Target.attachToTarget", map[string]any{"targetId": field(ct, "targetId"), "flatten": true}), "sessionId")
	tree := c.must(sid, "Page.getFrameTree", nil)
	var ft struct {
		FrameTree struct {
			Frame struct {
				ID string `json:"id"`
			} `json:"frame"`
		} `json:"frameTree"`
	}
	if err := jsonv2.Unmarshal(tree, &ft, wire.Options); err != nil {
		b.Fatal(err)
	}
	b.Run("screenshot", func(b *testing.B) {
		for b.Loop() {
			c.must(sid, "Page.captureScreenshot", map[string]any{"format": "png"})
		}
	})
	b.Run("sizeRead", func(b *testing.B) {
		for b.Loop() {
			w := c.must(sid, "Page.createIsolatedWorld", map[string]any{"frameId": ft.FrameTree.Frame.ID, "worldName": "livetab-size"})
			var ctx struct {
				ExecutionContextID int64 `json:"executionContextId"`
			}
			jsonv2.Unmarshal(w, &ctx, wire.Options)
			c.must(sid, "Runtime.evaluate", map[string]any{"expression": "[devicePixelRatio, innerWidth]", "contextId": ctx.ExecutionContextID, "returnByValue": true})
		}
	})
}
