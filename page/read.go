package page

import (
	"context"
	"fmt"
	"strconv"
	"unicode/utf8"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/internal/inpage"
)

// ReadOptions says what to read and how.
type ReadOptions struct {
	Format   string // "markdown" (default) or "text"
	Ref      Ref    // one element; zero for the whole page
	MaxChars int    // characters to return; default DefaultMaxChars
	Offset   int    // characters of the content to skip: where the last page ended (Content.Next)
}

// maxReadAll caps the content a read converts, for its total length and
// the pages after the first.
const maxReadAll = 4 << 20

// Content is page content read for a model, one page of it at a time. It
// is untrusted: it comes from the page.
type Content struct {
	URL       string
	Title     string
	Text      string // characters Offset to Offset+len(Text) of the content
	Offset    int    // where Text starts in the content, in characters (Unicode code points)
	Total     int    // the content's length in characters
	Next      int    // the offset that reads on after Text; 0 at the end
	Truncated bool   // the content goes on after Text (Next is set)
	AtLeast   bool   // the content is longer than Total, which is the most a read converts
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
	if o.Offset < 0 {
		return nil, fmt.Errorf("%w: offset %d is negative", ErrUnsupported, o.Offset)
	}
	q := map[string]any{"format": o.Format, "max": maxReadAll}
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
		URL       string `json:"url"`
		Title     string `json:"title"`
	}
	if err := a.call(s, "read", &r, q); err != nil {
		return nil, elemErr(o.Ref, err)
	}
	if !s.main {
		// An element of a frame: the content is the tab's page's.
		pi, err := a.info()
		if err != nil {
			return nil, err
		}
		r.URL, r.Title = pi.URL, pi.Title
	}
	c := &Content{URL: r.URL, Title: r.Title, AtLeast: r.Truncated}
	c.page([]rune(r.Content), o.Offset, o.MaxChars)
	return c, nil
}

// page sets c to the max characters of all from off, ending at a line or
// word break when one is near the end.
func (c *Content) page(all []rune, off, max int) {
	c.Total = len(all)
	c.Offset = min(off, c.Total)
	end := min(c.Offset+max, c.Total)
	if end < c.Total {
		floor := c.Offset + max*4/5
		cut := -1
		for _, sep := range []rune{'\n', ' '} {
			for i := end - 1; i > floor && cut < 0; i-- {
				if all[i] == sep {
					cut = i + 1
				}
			}
		}
		if cut > 0 {
			end = cut
		}
		c.Next, c.Truncated = end, true
	}
	c.Text = string(all[c.Offset:end])
}

// String is the content in a page block, ready for a model.
func (c *Content) String() string {
	s := fmt.Sprintf("url: %s\ntitle: %s\n\n%s", c.URL, strconv.Quote(c.Title), c.Text)
	out := wrapUntrusted(s) + "\n"
	total := strconv.Itoa(c.Total)
	if c.AtLeast {
		total = "more than " + total
	}
	end := c.Offset + utf8.RuneCountInString(c.Text)
	switch {
	case c.Offset >= c.Total && c.Total > 0:
		out += fmt.Sprintf("(offset %d is past the end: the content has %s characters)", c.Offset, total)
	case c.Truncated:
		out += fmt.Sprintf("(characters %d to %d of %s; read on with offset=%d)", c.Offset, end, total, c.Next)
	case c.Offset > 0:
		out += fmt.Sprintf("(characters %d to %d of %s: the end)", c.Offset, end, total)
	default:
		out += fmt.Sprintf("(all %s characters)", total)
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
		return nil, inpage.Threw("the script threw", res.ExceptionDetails)
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
