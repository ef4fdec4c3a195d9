package page

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"math"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// ScreenshotOptions says what to capture and how to encode it.
type ScreenshotOptions struct {
	FullPage  bool   // the whole page, up to MaxHeight, instead of the viewport
	Ref       Ref    // one element, scrolled into view, instead of the viewport
	Format    string // "png" (default) or "jpeg"
	Quality   int    // JPEG quality, 1 to 100; default 80
	MaxHeight int    // cap of a full-page capture in CSS pixels; default WithMaxScreenshotHeight
}

// Image is an encoded screenshot.
type Image struct {
	Data      []byte
	MIME      string // image/png or image/jpeg
	Width     int    // pixels
	Height    int    // pixels
	Truncated bool   // a full-page capture hit MaxHeight
}

// Screenshot captures the viewport, the full page or one element of the
// current tab. The tab is brought to the front first: Chrome does not paint
// a background tab, and a capture of one can hang.
func (p *Page) Screenshot(ctx context.Context, opts ScreenshotOptions) (*Image, error) {
	var img *Image
	_, err := p.run(ctx, false, Action{Kind: KindRead, Op: "screenshot", Ref: opts.Ref}, func(a *action) (string, error) {
		var err error
		img, err = a.screenshot(opts)
		return "", err
	})
	return img, err
}

func (o *ScreenshotOptions) format() (cdppage.CaptureScreenshotFormat, string, *int64, error) {
	switch strings.ToLower(o.Format) {
	case "", "png":
		return cdppage.CaptureScreenshotFormatPng, "image/png", nil, nil
	case "jpeg", "jpg":
		q := int64(o.Quality)
		if q <= 0 || q > 100 {
			q = 80
		}
		return cdppage.CaptureScreenshotFormatJpeg, "image/jpeg", &q, nil
	}
	return "", "", nil, fmt.Errorf("%w: unknown image format %q; use png or jpeg", ErrUnsupported, o.Format)
}

func (a *action) bringToFront() error {
	_, err := chromedp.Call(a.ctx, cdppage.BringToFront, cdp.Empty{})
	return err
}

// warmUp captures one pixel at the far corner of a viewport larger than
// the window, once per document. Until something asks for it, Chrome
// paints only the part the window shows (plus what it prepaints in time):
// right after a load, a capture of the rest came out, one time in five,
// as the shown part's top repeated below; later captures were right.
func (a *action) warmUp(pi pageInfo) {
	chromedp.Call(a.ctx, cdppage.CaptureScreenshot, cdppage.CaptureScreenshotParams{
		Format:                cdppage.CaptureScreenshotFormatPng,
		FromSurface:           new(true),
		CaptureBeyondViewport: new(true),
		Clip:                  &cdppage.Viewport{X: pi.SX + pi.VW - 1, Y: pi.SY + pi.VH - 1, Width: 1, Height: 1, Scale: 1},
	})
}

// frameWait bounds the wait for a painted frame.
const frameWait = time.Second

// waitFrame waits for the tab's next animation frame, so that a layout the
// page has changed (the viewport resized under it) is painted before the
// capture. It runs in page's own world, where the page cannot replace
// requestAnimationFrame; a tab that does not paint (a minimized window) is
// captured as it is after frameWait.
func (a *action) waitFrame() {
	lib, err := a.ensureLib(a.t.libs.main)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(a.ctx, frameWait)
	defer cancel()
	chromedp.Call(ctx, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: `function () { return new Promise((r) => requestAnimationFrame(() => r(true))); }`,
		ObjectID:            lib,
		AwaitPromise:        new(true),
		ReturnByValue:       new(true),
		Silent:              new(true),
	})
}

func (a *action) screenshot(o ScreenshotOptions) (*Image, error) {
	format, mime, quality, err := o.format()
	if err != nil {
		return nil, err
	}
	if err := a.bringToFront(); err != nil {
		return nil, err
	}
	params := cdppage.CaptureScreenshotParams{Format: format, Quality: quality, FromSurface: new(true)}
	img := &Image{MIME: mime}
	switch {
	case !o.Ref.IsZero():
		clip, err := a.elementClip(o.Ref)
		if err != nil {
			return nil, err
		}
		params.Clip = clip
		params.CaptureBeyondViewport = new(true)
	case o.FullPage:
		m, err := chromedp.Call(a.ctx, cdppage.GetLayoutMetrics, cdp.Empty{})
		if err != nil {
			return nil, err
		}
		if m.CSSContentSize == nil {
			return nil, fmt.Errorf("the page reported no content size")
		}
		maxH := o.MaxHeight
		if maxH <= 0 {
			maxH = a.t.p.cfg.maxShotHeight
		}
		h := math.Ceil(m.CSSContentSize.Height)
		if h > float64(maxH) {
			h = float64(maxH)
			img.Truncated = true
		}
		params.Clip = &cdppage.Viewport{Width: math.Ceil(m.CSSContentSize.Width), Height: h, Scale: 1}
		params.CaptureBeyondViewport = new(true)
	default:
		data, err := a.viewportShot(params)
		if err != nil {
			return nil, err
		}
		return img, img.setData(data)
	}
	res, err := chromedp.Call(a.ctx, cdppage.CaptureScreenshot, params)
	if err != nil {
		return nil, fmt.Errorf("capturing the screenshot: %w", err)
	}
	return img, img.setData(res.Data)
}

// viewportTries bounds the captures of a viewport that keeps changing size.
const viewportTries = 3

// viewportShot captures the viewport's own rectangle. In a windowed Chrome
// the "started debugging this browser" bar takes height from the page,
// and comes and goes (it slides in, and flickers after a navigation), so
// the viewport can change size between the reading of its size and the
// capture: viewportShot waits for a painted frame, reads the viewport,
// captures it and reads it again, and captures again while the two
// readings differ.
//
// The capture paints beyond the window's surface: a viewport the tab
// emulates can be taller than the window, and what the window does not
// show came out as the shown part with its top repeated below.
func (a *action) viewportShot(params cdppage.CaptureScreenshotParams) ([]byte, error) {
	var data []byte
	for try := 1; ; try++ {
		a.waitFrame()
		pi, err := a.info()
		if err != nil {
			return nil, err
		}
		a.t.mu.Lock()
		fresh := a.t.warmSeq != a.t.navSeq+1
		a.t.warmSeq = a.t.navSeq + 1
		a.t.mu.Unlock()
		if fresh {
			// The first capture of a document: a navigation returns once
			// the page is quiet, which can be before Chrome has drawn it
			// under the debugging bar (the capture came out with the top
			// repeated at the bottom, 3 loads in 4).
			a.painted(a.t.libs.main)
			if pi.VW > pi.OW || pi.VH > pi.OH {
				a.warmUp(pi)
			}
		}
		params.Clip = &cdppage.Viewport{X: pi.SX, Y: pi.SY, Width: pi.VW, Height: pi.VH, Scale: 1}
		params.CaptureBeyondViewport = new(true)
		res, err := chromedp.Call(a.ctx, cdppage.CaptureScreenshot, params)
		if err != nil {
			return nil, fmt.Errorf("capturing the screenshot: %w", err)
		}
		data = res.Data
		after, err := a.info()
		if err != nil {
			return nil, err
		}
		if after.VW == pi.VW && after.VH == pi.VH || try == viewportTries {
			return data, nil
		}
	}
}

// setData keeps an encoded capture and its size.
func (img *Image) setData(data []byte) error {
	img.Data = data
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("reading the screenshot: %w", err)
	}
	img.Width, img.Height = cfg.Width, cfg.Height
	return nil
}

// elementClip is ref's box in page coordinates, after scrolling it into view.
func (a *action) elementClip(ref Ref) (*cdppage.Viewport, error) {
	s, jsref, err := a.route(ref)
	if err != nil {
		return nil, err
	}
	var r frameBox
	if !s.main {
		if err := a.call(a.t.libs.main, "frameBox", nil, s.frame, true); err != nil {
			return nil, elemErr(ref, err)
		}
	}
	if err := a.call(s, "rect", &r, jsref); err != nil {
		return nil, elemErr(ref, err)
	}
	if !s.main {
		var fb frameBox
		if err := a.call(a.t.libs.main, "frameBox", &fb, s.frame, false); err != nil {
			return nil, elemErr(ref, err)
		}
		r.X += fb.X
		r.Y += fb.Y
	}
	pi, err := a.info()
	if err != nil {
		return nil, err
	}
	// Whole pixels, as the browser's own node capture does.
	x, y := math.Floor(r.X+pi.SX), math.Floor(r.Y+pi.SY)
	w, h := math.Ceil(r.X+pi.SX+r.W)-x, math.Ceil(r.Y+pi.SY+r.H)-y
	if w < 1 || h < 1 {
		return nil, &ElementError{Ref: ref, Code: "hidden", Msg: "it has no size"}
	}
	return &cdppage.Viewport{X: x, Y: y, Width: w, Height: h, Scale: 1}, nil
}

// MarkedScreenshot takes a viewport snapshot and a viewport screenshot, and
// draws each listed element's box and index over the image (set-of-marks), so
// that a vision model can answer "click 12". The snapshot's indexes are the
// ones the marks show and become the tab's current indexes.
func (p *Page) MarkedScreenshot(ctx context.Context, opts ScreenshotOptions, sopts SnapshotOptions) (*Image, *Snapshot, error) {
	var img *Image
	var snap *Snapshot
	_, err := p.run(ctx, false, Action{Kind: KindRead, Op: "screenshot"}, func(a *action) (string, error) {
		var err error
		img, snap, err = a.marked(opts, sopts)
		return "", err
	})
	return img, snap, err
}

func (a *action) marked(o ScreenshotOptions, so SnapshotOptions) (*Image, *Snapshot, error) {
	if o.FullPage || !o.Ref.IsZero() {
		return nil, nil, fmt.Errorf("%w: a marked screenshot shows the viewport only", ErrUnsupported)
	}
	_, mime, _, err := o.format()
	if err != nil {
		return nil, nil, err
	}
	so.ViewportOnly = true
	var snap *Snapshot
	var src image.Image
	scale := 1.0
	// The viewport can change size between the snapshot and the capture
	// (Chrome's debugging bar coming or going): the boxes would then be
	// drawn on another layout than theirs, so both are taken again.
	for try := 1; ; try++ {
		var err error
		if snap, err = a.snapshot(so); err != nil {
			return nil, nil, err
		}
		raw, err := a.screenshot(ScreenshotOptions{Format: "png"})
		if err != nil {
			return nil, nil, err
		}
		if src, err = png.Decode(bytes.NewReader(raw.Data)); err != nil {
			return nil, nil, fmt.Errorf("decoding the screenshot: %w", err)
		}
		if snap.Viewport.Width > 0 {
			scale = float64(src.Bounds().Dx()) / snap.Viewport.Width
		}
		if math.Abs(float64(src.Bounds().Dy())-snap.Viewport.Height*scale) < 1 || try == viewportTries {
			break
		}
	}
	out := drawMarks(src, snap.Elements, scale)
	var buf bytes.Buffer
	if mime == "image/jpeg" {
		q := o.Quality
		if q <= 0 || q > 100 {
			q = 80
		}
		err = jpeg.Encode(&buf, out, &jpeg.Options{Quality: q})
	} else {
		err = png.Encode(&buf, out)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the marked screenshot: %w", err)
	}
	b := out.Bounds()
	return &Image{Data: buf.Bytes(), MIME: mime, Width: b.Dx(), Height: b.Dy()}, snap, nil
}
