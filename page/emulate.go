package page

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// clickAt clicks viewport point x, y (CSS pixels) with trusted mouse events,
// for a model that sees a screenshot.
func (a *action) clickAt(x, y float64, o ClickOptions) (string, error) {
	btn, err := mouseButton(o.Button)
	if err != nil {
		return "", err
	}
	var vp struct {
		VW float64 `json:"vw"`
		VH float64 `json:"vh"`
	}
	if err := a.call(a.t.libs.main, "info", &vp); err == nil && (x < 0 || y < 0 || x >= vp.VW || y >= vp.VH) {
		return "", fmt.Errorf("%w: %.0f,%.0f is outside the %.0fx%.0f viewport; scroll first", ErrUnsupported, x, y, vp.VW, vp.VH)
	}
	var hit struct {
		Label string `json:"label"`
	}
	_ = a.call(a.t.libs.main, "at", &hit, x, y)
	if err := a.pressLandsInRead(x, y); err != nil {
		return "", err
	}
	if err := chromedp.Do(a.ctx, chromedp.MouseEvent(chromedp.MouseMoved, x, y)); err != nil {
		return "", err
	}
	// Once more where the pointer now is (see stillThere).
	if err := a.pressLandsInRead(x, y); err != nil {
		return "", err
	}
	for i := 1; i <= max(o.Count, 1); i++ {
		if err := chromedp.Do(a.ctx, chromedp.MouseClickXY(x, y, chromedp.ButtonType(btn), chromedp.ClickCount(i))); err != nil {
			return "", err
		}
	}
	a.settle()
	return fmt.Sprintf("clicked at %.0f,%.0f on %s", x, y, hit.Label), nil
}

// ViewportArgs are the arguments of browser_resize.
type ViewportArgs struct {
	Width       int     `json:"width,omitempty" jsonschema:"CSS pixels." schema:"minimum=100 maximum=4000"`
	Height      int     `json:"height,omitempty" jsonschema:"CSS pixels." schema:"minimum=100 maximum=4000"`
	Scale       float64 `json:"scale,omitempty" jsonschema:"Device pixel ratio." schema:"minimum=0.5 maximum=4"`
	Mobile      bool    `json:"mobile,omitempty" jsonschema:"Emulate a phone (touch, mobile viewport)."`
	Media       string  `json:"media,omitempty" schema:"enum=screen|print"`
	ColorScheme string  `json:"color_scheme,omitempty" schema:"enum=light|dark|no-preference"`
	Reset       bool    `json:"reset,omitempty" jsonschema:"Drop every emulation: the tab's own size and media again."`
}

func (a *action) emulate(v ViewportArgs) (string, error) {
	if v.Reset {
		if _, err := chromedp.Call(a.ctx, emulation.ClearDeviceMetricsOverride, struct{}{}); err != nil {
			return "", err
		}
		_, err := chromedp.Call(a.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{})
		if err != nil {
			return "", err
		}
		_, _ = chromedp.Call(a.ctx, emulation.SetTouchEmulationEnabled, emulation.SetTouchEmulationEnabledParams{Enabled: false})
		return "the viewport and media are the tab's own again", nil
	}
	var done []string
	if v.Width > 0 || v.Height > 0 || v.Scale > 0 || v.Mobile {
		if v.Width <= 0 || v.Height <= 0 {
			return "", fmt.Errorf("%w: give both width and height", ErrUnsupported)
		}
		scale := v.Scale
		if scale <= 0 {
			scale = 1
		}
		_, err := chromedp.Call(a.ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
			Width: int64(v.Width), Height: int64(v.Height), DeviceScaleFactor: scale, Mobile: v.Mobile,
		})
		if err != nil {
			return "", fmt.Errorf("resizing the viewport: %w", err)
		}
		_, _ = chromedp.Call(a.ctx, emulation.SetTouchEmulationEnabled, emulation.SetTouchEmulationEnabledParams{Enabled: v.Mobile})
		kind := ""
		if v.Mobile {
			kind = " mobile"
		}
		done = append(done, fmt.Sprintf("a %dx%d%s viewport at %gx", v.Width, v.Height, kind, scale))
	}
	if v.Media != "" || v.ColorScheme != "" {
		p := emulation.SetEmulatedMediaParams{Media: v.Media}
		if v.ColorScheme != "" {
			p.Features = []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: v.ColorScheme}}
		}
		if _, err := chromedp.Call(a.ctx, emulation.SetEmulatedMedia, p); err != nil {
			return "", fmt.Errorf("emulating media: %w", err)
		}
		if v.Media != "" {
			done = append(done, "media "+v.Media)
		}
		if v.ColorScheme != "" {
			done = append(done, "prefers-color-scheme "+v.ColorScheme)
		}
	}
	if len(done) == 0 {
		return "", fmt.Errorf("%w: give width and height, media, color_scheme, or reset", ErrUnsupported)
	}
	return "emulating " + strings.Join(done, ", "), nil
}

// PDFArgs are the arguments of browser_pdf.
type PDFArgs struct {
	Name       string `json:"name,omitempty" jsonschema:"File name in the download directory (default: from the page title)."`
	Landscape  bool   `json:"landscape,omitempty"`
	Background bool   `json:"background,omitempty" jsonschema:"Print background colours and images."`
}

// pdf prints the page to a PDF file in the download directory.
func (a *action) pdf(o PDFArgs) (string, error) {
	dir := a.t.p.cfg.downloadDir
	if dir == "" {
		return "", fmt.Errorf("%w: no download directory to save the PDF in; the person can set one with --download-dir", ErrUnsupported)
	}
	res, err := chromedp.Call(a.ctx, cdppage.PrintToPDF, cdppage.PrintToPDFParams{Landscape: &o.Landscape, PrintBackground: &o.Background})
	if err != nil {
		return "", fmt.Errorf("printing to PDF: %w", err)
	}
	name := o.Name
	if name == "" {
		var pi pageInfo
		if a.call(a.t.libs.main, "info", &pi) == nil {
			name = pi.Title
		}
	}
	name = safeName(name)
	if name == "download" {
		name = "page"
	}
	if !strings.EqualFold(filepath.Ext(name), ".pdf") {
		name += ".pdf"
	}
	path, err := placeNew(dir, name, func(to string) error {
		return writeNew(to, func(w io.Writer) error { _, err := w.Write(res.Data); return err })
	})
	if err != nil {
		return "", fmt.Errorf("saving the PDF: %w", err)
	}
	sum := sha256.Sum256(res.Data)
	// Named after the page's title: the page's words, in a page block.
	return fmt.Sprintf("saved a PDF (%d bytes, application/pdf, sha256 %s):\n%s", len(res.Data), hex.EncodeToString(sum[:]), wrapUntrusted("path: "+path)), nil
}

// StorageArgs are the arguments of browser_storage.
type StorageArgs struct {
	What string `json:"what,omitempty" schema:"enum=all|cookies|local|session default=all"`
}

// storage lists the cookies the page's URL gets and its local and session
// storage. httpOnly cookies are the person's sessions: their values are
// withheld.
func (a *action) storage(what string) (string, error) {
	var b strings.Builder
	var pi pageInfo
	if err := a.call(a.t.libs.main, "info", &pi); err != nil {
		return "", err
	}
	if what == "" || what == "all" || what == "cookies" {
		res, err := chromedp.Call(a.ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{pi.URL}})
		if err != nil {
			return "", fmt.Errorf("reading the cookies: %w", err)
		}
		fmt.Fprintf(&b, "cookies of %s (%d):\n", pi.URL, len(res.Cookies))
		for _, c := range res.Cookies {
			v := cutText(c.Value, 200)
			if c.HTTPOnly {
				v = "(httpOnly: withheld)"
			}
			fmt.Fprintf(&b, "  %s=%s; domain=%s; path=%s", c.Name, v, c.Domain, c.Path)
			if c.Secure {
				b.WriteString("; secure")
			}
			if c.Session {
				b.WriteString("; session")
			}
			b.WriteByte('\n')
		}
	}
	for _, k := range []string{"local", "session"} {
		if what != "" && what != "all" && what != k {
			continue
		}
		var items [][2]string
		if err := a.call(a.t.libs.main, "storage", &items, k); err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%sStorage (%d):\n", k, len(items))
		for _, kv := range items {
			fmt.Fprintf(&b, "  %s = %s\n", cutText(kv[0], 100), cutText(kv[1], 300))
		}
	}
	return wrapUntrusted(b.String()), nil
}
