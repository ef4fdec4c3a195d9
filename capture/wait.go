package capture

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/network"
)

// Filter selects the media WaitNew waits for. The zero Filter accepts any
// new image, video, audio or canvas.
type Filter struct {
	// MIME is a prefix of the media type, such as "image/", "video/" or
	// "audio/mpeg".
	MIME string
	// MinBytes is the smallest size accepted; thumbnails and placeholders
	// are usually far smaller than the result.
	MinBytes int64
	// MinWidth and MinHeight are the smallest intrinsic size of an image,
	// video or canvas element. Setting either ignores network responses,
	// whose size in pixels is unknown.
	MinWidth, MinHeight int
	// Within keeps only elements inside the element matching this CSS
	// selector, such as the results pane. Network responses are then
	// ignored, as they have no place on the page.
	Within string
	// Region keeps only elements whose center is inside this rectangle of
	// the viewport, in CSS pixels. Network responses are then ignored.
	Region *Rect
	// URLContains keeps only media whose URL contains this string.
	URLContains string
	// ElementsOnly ignores network responses; ResponsesOnly ignores
	// elements.
	ElementsOnly, ResponsesOnly bool
}

// Rect is a rectangle of the viewport in CSS pixels.
type Rect struct {
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
}

// String describes the filter for error messages.
func (f Filter) String() string {
	var parts []string
	add := func(format string, a ...any) { parts = append(parts, fmt.Sprintf(format, a...)) }
	if f.MIME != "" {
		add("type %s*", f.MIME)
	}
	if f.MinBytes > 0 {
		add("≥ %d bytes", f.MinBytes)
	}
	if f.MinWidth > 0 || f.MinHeight > 0 {
		add("≥ %d×%d px", f.MinWidth, f.MinHeight)
	}
	if f.Within != "" {
		add("inside %q", f.Within)
	}
	if f.Region != nil {
		add("in region %+v", *f.Region)
	}
	if f.URLContains != "" {
		add("URL containing %q", f.URLContains)
	}
	if len(parts) == 0 {
		return "any media"
	}
	return strings.Join(parts, ", ")
}

func (f Filter) responses() bool {
	return !f.ElementsOnly && f.MinWidth == 0 && f.MinHeight == 0 && f.Within == "" && f.Region == nil
}

// kinds are the element kinds that can hold media of the filter's type.
func (f Filter) kinds() []string {
	m := strings.ToLower(f.MIME)
	switch {
	case m == "":
		return []string{"img", "video", "audio", "canvas"}
	case strings.HasPrefix(m, "image"):
		return []string{"img", "canvas"}
	case strings.HasPrefix(m, "video"):
		return []string{"video"}
	case strings.HasPrefix(m, "audio"):
		// An audio file can play in a <video> element too.
		return []string{"audio", "video"}
	}
	return nil
}

func (f Filter) mimeOK(t string) bool {
	t = baseType(t)
	if f.MIME == "" {
		return strings.HasPrefix(t, "image/") || strings.HasPrefix(t, "video/") || strings.HasPrefix(t, "audio/")
	}
	return strings.HasPrefix(t, strings.ToLower(f.MIME))
}

// check turns the filter into the test applied once a candidate's declared
// type and size are known, before its bytes move.
func (f Filter) check(kind string) check {
	return func(t string, size int64) error {
		if f.MinBytes > 0 && size >= 0 && size < f.MinBytes {
			return fmt.Errorf("%w: %d bytes, fewer than %d", errSkip, size, f.MinBytes)
		}
		// An element of the right kind with an unlabelled blob is let
		// through; the type is sniffed from its bytes later.
		if t == "" || baseType(t) == "application/octet-stream" {
			if kind == "" || kind == "url" {
				return fmt.Errorf("%w: no media type", errSkip)
			}
			return nil
		}
		if !f.mimeOK(t) {
			return fmt.Errorf("%w: type %s", errSkip, t)
		}
		return nil
	}
}

var mediaResourceTypes = map[network.ResourceType]bool{
	network.ResourceTypeImage: true, network.ResourceTypeMedia: true, network.ResourceTypeFetch: true,
	network.ResourceTypeXHR: true, network.ResourceTypeOther: true, network.ResourceTypeDocument: false,
}

// pollSlice is how long one in-page wait for a new element lasts before Go
// looks at the network and the context again.
const pollSlice = 300 * time.Millisecond

// WaitNew runs trigger (a click on "Generate", or nil when the generation
// has already started) and waits until media matching f that was not on the
// page before appears, either as a network response of the tab or as an
// element (a new element, or one whose source changed); then it captures
// it. It ends with ctx: give it a deadline that fits the generation, which
// can take minutes. A candidate whose size or type turns out not to match
// is skipped and the wait goes on.
func (c *Capturer) WaitNew(ctx context.Context, f Filter, trigger func(ctx context.Context) error, opts ...Option) (*Result, error) {
	return c.run(ctx, func(ctx context.Context) (*Result, error) { return c.waitNew(ctx, f, trigger, opts) })
}

func (c *Capturer) waitNew(ctx context.Context, f Filter, trigger func(ctx context.Context) error, opts []Option) (*Result, error) {
	cfg := c.opts(opts)
	group := c.newGroup()
	defer c.releaseGroup(group)
	l, err := c.newLib(ctx, "", group)
	if err != nil {
		return nil, err
	}
	if err := l.Call(ctx, "mark", nil); err != nil {
		return nil, err
	}
	seq := c.w.current()
	if trigger != nil {
		if err := trigger(ctx); err != nil {
			return nil, fmt.Errorf("capture: the trigger of WaitNew failed: %w", err)
		}
	}
	kinds := f.kinds()
	elements := !f.ResponsesOnly && len(kinds) > 0
	useResponses := f.responses()
	jsFilter := map[string]any{
		"kinds": kinds, "minWidth": f.MinWidth, "minHeight": f.MinHeight,
		"within": f.Within, "rect": f.Region, "urlContains": f.URLContains,
		"waitMs": pollSlice.Milliseconds(),
	}
	fail := func(err error) (*Result, error) {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("capture: no new media (%s) appeared: %w", f, ctx.Err())
		}
		return nil, err
	}
	for {
		if useResponses {
			rs, next, notify := c.w.since(seq)
			seq = next
			for i := range rs {
				r := &rs[i]
				if !r.candidate(f) {
					continue
				}
				res, err := c.url(ctx, r.url, c.opts(append(opts, checkOption(f.check("url")))))
				if errors.Is(err, errSkip) {
					continue
				}
				if err != nil {
					return fail(err)
				}
				return res, nil
			}
			if !elements {
				select {
				case <-notify:
				case <-ctx.Done():
					return fail(ctx.Err())
				}
				continue
			}
		}
		if elements {
			el, err := l.Ref(ctx, "findNew", val(jsFilter))
			if errors.Is(err, ErrTabClosed) && ctx.Err() == nil && c.tabAlive() {
				// The page navigated: everything on the new one is new.
				if l, err = c.newLib(ctx, "", group); err != nil {
					return fail(err)
				}
				continue
			}
			if err != nil {
				return fail(err)
			}
			if el != "" {
				var d desc
				if err := l.Call(ctx, "describe", &d, obj(el)); err != nil {
					continue // gone again already
				}
				res, err := c.ladder(ctx, cfg, l, el, d, f.check(d.Kind))
				if errors.Is(err, errSkip) {
					continue
				}
				if err != nil {
					return fail(err)
				}
				return res, nil
			}
		}
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
	}
}

// checkOption carries WaitNew's filter into URL's ladder.
func checkOption(chk check) Option { return func(c *config) { c.check = chk } }

func (c *Capturer) tabAlive() bool {
	select {
	case <-c.det:
		return false
	default:
		return true
	}
}

// candidate says whether a finished response may be the media f waits for.
func (r *response) candidate(f Filter) bool {
	if r.failed || r.status != 200 || !mediaResourceTypes[r.typ] || !f.mimeOK(r.mime) {
		return false
	}
	if f.MinBytes > 0 && r.size() >= 0 && r.size() < f.MinBytes {
		return false
	}
	return f.URLContains == "" || strings.Contains(r.url, f.URLContains)
}

// ResponseInfo describes a response the Capturer saw.
type ResponseInfo struct {
	URL    string
	Status int64
	MIME   string
	// Size is the decoded body size, -1 when unknown.
	Size int64
	Type network.ResourceType
}

// Responses lists the finished responses of the tab the Capturer saw that
// carry images, video or audio, oldest first; URL captures them.
func (c *Capturer) Responses() []ResponseInfo {
	rs, _, _ := c.w.since(0)
	var out []ResponseInfo
	for _, r := range rs {
		if r.candidate(Filter{}) {
			out = append(out, ResponseInfo{URL: r.url, Status: r.status, MIME: r.mime, Size: r.size(), Type: r.typ})
		}
	}
	return out
}
