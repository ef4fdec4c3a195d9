package page

import (
	"context"
	"fmt"
	"strconv"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/internal/inpage"
)

// ReadOptions says what to read and how.
type ReadOptions struct {
	Format   string // "markdown" (default) or "text"
	Ref      Ref    // one element; zero for the whole page
	MaxChars int    // cap on the content; default DefaultMaxChars
}

// Content is page content read for a model. It is untrusted: it comes from
// the page.
type Content struct {
	URL       string
	Title     string
	Text      string
	Truncated bool
}

// Read returns the content of the page, or of one element, as Markdown
// (headings, links, lists, tables, code) or as plain text. Hidden elements are
// left out; open shadow roots and same-origin iframes are read in place.
func (p *Page) Read(ctx context.Context, opts ReadOptions) (*Content, error) {
	var c *Content
	_, err := p.run(ctx, false, Action{Kind: KindRead, Op: "read", Ref: opts.Ref}, func(a *action) (string, error) {
		var err error
		c, err = a.read(opts)
		return "", err
	})
	return c, err
}

func (a *action) read(o ReadOptions) (*Content, error) {
	switch o.Format {
	case "", "markdown", "md":
		o.Format = "markdown"
	case "text":
	default:
		return nil, fmt.Errorf("%w: unknown format %q; use markdown or text", ErrUnsupported, o.Format)
	}
	if o.MaxChars <= 0 {
		o.MaxChars = DefaultMaxChars
	}
	s := a.t.libs.main
	q := map[string]any{"format": o.Format, "max": o.MaxChars}
	if !o.Ref.IsZero() {
		rs, jsref, err := a.route(o.Ref)
		if err != nil {
			return nil, err
		}
		s = rs
		q["ref"] = jsref
	}
	var r struct {
		Content   string `json:"content"`
		Truncated bool   `json:"truncated"`
	}
	if err := a.call(s, "read", &r, q); err != nil {
		return nil, elemErr(o.Ref, err)
	}
	pi, err := a.info()
	if err != nil {
		return nil, err
	}
	return &Content{URL: pi.URL, Title: pi.Title, Text: r.Content, Truncated: r.Truncated}, nil
}

// String is the content in a page-content block, ready for a model.
func (c *Content) String() string {
	s := fmt.Sprintf("url: %s\ntitle: %s\n\n%s", c.URL, strconv.Quote(c.Title), c.Text)
	out := untrustedNote + "\n" + wrapUntrusted(s)
	if c.Truncated {
		out += fmt.Sprintf("\n(cut at %d characters; read one element, or ask for more)", len(c.Text))
	}
	return out
}

// Evaluate runs a JavaScript expression in the page's main world, awaits a
// promise it returns, and returns the result as JSON (nil for undefined). It
// runs as if the user had acted, so it may open popups or play media.
func (p *Page) Evaluate(ctx context.Context, expression string) (jsonv2.Value, error) {
	var v jsonv2.Value
	_, err := p.run(ctx, false, Action{Kind: KindEval, Op: "eval", Text: expression}, func(a *action) (string, error) {
		var err error
		v, err = a.evaluate(expression)
		return "", err
	})
	return v, err
}

func (a *action) evaluate(expr string) (jsonv2.Value, error) {
	res, err := chromedp.Call(a.ctx, runtime.Evaluate, runtime.EvaluateParams{
		Expression:    expr,
		ReturnByValue: new(true),
		AwaitPromise:  new(true),
		UserGesture:   new(true),
	})
	if err != nil {
		return nil, err
	}
	if res.ExceptionDetails != nil {
		return nil, fmt.Errorf("the script threw: %s", inpage.ExceptionText(res.ExceptionDetails))
	}
	r := res.Result
	switch {
	case r.Type == runtime.RemoteObjectTypeUndefined:
		return nil, nil
	case r.UnserializableValue != "":
		return jsonv2.Marshal(string(r.UnserializableValue))
	case len(r.Value) == 0:
		return jsonv2.Value("null"), nil
	}
	return r.Value, nil
}
