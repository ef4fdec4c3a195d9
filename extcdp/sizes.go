package extcdp

import (
	"fmt"
	"math"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"

	"github.com/livetab/livetab/internal/wire"
)

// A screenshot is as large as a client asks: a clip, its scale, the device
// scale factor and the viewport it emulates multiply, and Chrome draws and
// encodes the whole image in the person's browser. Measured on Chromium 156
// (TestRedTeamHugeScreenshotsCrashNoBrowser,
// docs/decisions/2026-11-27-sizes-and-scales-are-bounded.md): from about
// 8×10^8 device pixels on the whole browser exited, through chrome.debugger
// and Chrome's own port alike; a viewport of 10^7 px, or one scaled 1000
// times, left the screenshot unanswered and the tab taking none again; and
// below that other tabs waited for seconds (4 s at 16384² px). So the relay
// refuses a screenshot of more than maxShotPixels, reading the page's own
// device pixel ratio and viewport first, in a world its scripts cannot
// reach.
const (
	// maxShotPixels bounds one screenshot's device pixels: 8192×16384,
	// a 1280 px wide page 100,000 px long, or 23,000 px long at 2×.
	maxShotPixels = 1 << 27
	// maxViewportScale bounds the scale of Emulation.setDeviceMetricsOverride's
	// viewport, as Chrome bounds its own scale parameter.
	maxViewportScale = 10
)

// shotGeometry is what the page says of its size, read in treeWorld.
const shotGeometry = `[devicePixelRatio, innerWidth, innerHeight,
	document.documentElement ? document.documentElement.scrollWidth : 0,
	document.documentElement ? document.documentElement.scrollHeight : 0]`

// guardSize answers m, and reports that it did, when it asks for an image
// past the bounds above, or when the page's size could not be read. It
// waits for the read: the lane holds later commands meanwhile.
func (c *Client) guardSize(m *cdproto.Message, t *tab, sid string, s *session) bool {
	switch m.Method {
	case cdproto.CommandEmulationSetDeviceMetricsOverride:
		var p struct {
			Viewport *struct {
				Scale float64 `json:"scale"`
			} `json:"viewport"`
		}
		if len(m.Params) > 0 && jsonv2.Unmarshal(m.Params, &p, wire.Options) != nil {
			c.fail(m.ID, m.SessionID, -32602, fmt.Sprintf("livetab: invalid %s params", m.Method))
			return true
		}
		if p.Viewport != nil && !(p.Viewport.Scale <= maxViewportScale) {
			c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab refuses a viewport scaled %g times: at most %d, as Chrome then never answered a screenshot of the tab and the tab took no other screenshot; zoom less, or clip a part with Page.captureScreenshot's clip.scale", p.Viewport.Scale, maxViewportScale))
			return true
		}
		return false
	case cdproto.CommandPageCaptureScreenshot:
	default:
		return false
	}
	var p struct {
		Clip *struct {
			Width  float64  `json:"width"`
			Height float64  `json:"height"`
			Scale  *float64 `json:"scale"`
		} `json:"clip"`
		CaptureBeyondViewport bool `json:"captureBeyondViewport"`
	}
	if len(m.Params) > 0 && jsonv2.Unmarshal(m.Params, &p, wire.Options) != nil {
		c.fail(m.ID, m.SessionID, -32602, fmt.Sprintf("livetab: invalid %s params", m.Method))
		return true
	}
	if c.crashedAt(t, sid) {
		return false // answered at once as crashed, with no read
	}
	g, err := c.pageGeometry(t, sid, c.frameOf(t, sid, s))
	if err != nil {
		c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab: %s was not sent: reading the page's size first failed: %v; retry once the page answers", m.Method, err))
		return true
	}
	dpr, w, h := g[0], g[1], g[2]
	if p.CaptureBeyondViewport {
		w, h = math.Max(w, g[3]), math.Max(h, g[4])
	}
	if p.Clip != nil {
		scale := 1.0
		if p.Clip.Scale != nil {
			scale = *p.Clip.Scale
		}
		w, h = p.Clip.Width*scale, p.Clip.Height*scale
	}
	w, h = math.Ceil(w*dpr), math.Ceil(h*dpr)
	if px := w * h; !(px <= maxShotPixels) {
		c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab refuses a screenshot of %.0f×%.0f device pixels (device pixel ratio %g): at most %d pixels in all, as larger ones made the person's whole browser exit or stop answering; take it in parts with clip, lower clip.scale or the device scale factor, or emulate a smaller viewport", w, h, dpr, maxShotPixels))
		return true
	}
	return false
}

// pageGeometry reads shotGeometry in the attachment's main frame.
func (c *Client) pageGeometry(t *tab, sid string, frame target.ID) ([5]float64, error) {
	var g [5]float64
	v, err := c.worldEval(t, sid, frame, shotGeometry)
	if err != nil {
		return g, err
	}
	var r struct {
		Result struct {
			Value []float64 `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := jsonv2.Unmarshal(v, &r, wire.Options); err != nil {
		return g, err
	}
	if r.ExceptionDetails != nil {
		return g, fmt.Errorf("%s", r.ExceptionDetails.Text)
	}
	if len(r.Result.Value) != len(g) {
		return g, fmt.Errorf("the page answered %v", r.Result.Value)
	}
	copy(g[:], r.Result.Value)
	return g, nil
}

// crashedAt reports whether the page of the attachment (the tab's, or a
// child session's frame) is known to have crashed: a read of it would wait
// for its bound, holding the lane, where the command is answered at once.
func (c *Client) crashedAt(t *tab, sid string) bool {
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	if sid == "" {
		return t.crash.is
	}
	ch := c.r.children[sid]
	return ch != nil && ch.tab == t && ch.crash.is
}
