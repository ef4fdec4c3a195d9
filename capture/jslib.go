package capture

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"

	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/runtime"

	"github.com/livetab/livetab/internal/inpage"
)

var (
	//go:embed js/capture.js
	libJS string
	//go:embed js/read.js
	readJS string
)

// lib is the in-page library of one capture, in one JavaScript world. It
// and everything it holds belong to the object group, which the capture
// releases at its end.
type lib = inpage.Lib

var (
	val = inpage.Val
	obj = inpage.Obj
)

// newKit says how the capture library loads and how its errors read; its
// TabErr is the Capturer's own, which knows when the tab detached.
func newKit(c *Capturer) *inpage.Kit {
	return &inpage.Kit{
		Source:   libJS,
		Name:     "capture library",
		WaitHint: "chromedp.WaitVisible",
		Codes: map[string]error{
			"nomedia":  ErrNoMedia,
			"cors":     ErrCrossOrigin,
			"gone":     ErrGone,
			"http":     ErrHTTP,
			"notfound": ErrNotFound,
		},
		NotFound: ErrNotFound,
		TabErr:   c.cdpErr,
	}
}

// newGroup names a fresh object group for one capture.
func (c *Capturer) newGroup() string {
	c.mu.Lock()
	c.groupSeq++
	n := c.groupSeq
	c.mu.Unlock()
	return "livetab-capture-" + strconv.Itoa(n)
}

// releaseGroup frees the group's objects, and with the library the blobs it
// registered.
func (c *Capturer) releaseGroup(group string) { inpage.Release(c.t, group) }

// newLib loads the library into the world of el, or into the main world of
// the tab when el is "".
func (c *Capturer) newLib(ctx context.Context, el runtime.RemoteObjectID, group string) (*lib, error) {
	return c.kit.Load(ctx, c.t, el, group)
}

// read returns bytes [off, off+n) of registered blob id.
func (c *Capturer) read(ctx context.Context, l *lib, id, off int64, n int) ([]byte, error) {
	res, err := cdp.Call(ctx, c.t, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: readJS,
		ObjectID:            l.Object(),
		Arguments:           []*runtime.CallArgument{val(id), val(off), val(n)},
		ReturnByValue:       new(true),
		AwaitPromise:        new(true),
		Silent:              new(true),
	})
	if err != nil {
		return nil, c.cdpErr(fmt.Errorf("reading bytes %d–%d in the page: %w", off, off+int64(n), err))
	}
	if res.ExceptionDetails != nil {
		return nil, inpage.Threw(fmt.Sprintf("reading bytes %d–%d in the page", off, off+int64(n)), res.ExceptionDetails)
	}
	raw := []byte(res.Result.Value)
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		// Base64 has nothing JSON escapes: decode in place, sparing a copy
		// of a megabyte-sized string.
		b64 := raw[1 : len(raw)-1]
		out := make([]byte, base64.StdEncoding.DecodedLen(len(b64)))
		m, err := base64.StdEncoding.Decode(out, b64)
		if err != nil {
			return nil, fmt.Errorf("decoding bytes from the page: %w", err)
		}
		return out[:m], nil
	}
	var r struct {
		Err string `json:"err"`
		Msg string `json:"msg"`
	}
	if err := jsonv2.Unmarshal(raw, &r); err == nil && r.Err != "" {
		return nil, c.kit.Error(r.Err, r.Msg)
	}
	var s string
	if err := jsonv2.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("decoding bytes from the page: %w", err)
	}
	return base64.StdEncoding.DecodeString(s)
}

// cdpErr explains a failed command when the tab closed or navigated under
// it: the capture cannot go on in either case.
func (c *Capturer) cdpErr(err error) error {
	if err == nil || errors.Is(err, ErrTabClosed) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if inpage.Navigated(err) {
		return fmt.Errorf("%w (or navigated away): %w", ErrTabClosed, err)
	}
	return c.tabErr(err)
}

// Ref points at an element of the page. Make one with CSS, BackendNode,
// Object or JS; the page package's snapshot indexes map onto these.
type Ref struct{ r inpage.Ref }

// CSS refers to the first element matching a CSS selector, looking into open
// shadow roots when the document itself has no match.
func CSS(selector string) Ref { return Ref{inpage.Ref{CSS: selector}} }

// BackendNode refers to an element by its DOM backend node id.
func BackendNode(id cdp.BackendNodeID) Ref { return Ref{inpage.Ref{Backend: id}} }

// Object refers to an element by a Runtime remote object id the caller
// holds; the capture does not release it.
func Object(id runtime.RemoteObjectID) Ref { return Ref{inpage.Ref{Object: id}} }

// JS refers to the element a JavaScript expression evaluates to in the
// page's main world, for example `document.querySelectorAll("img")[3]`.
func JS(expr string) Ref { return Ref{inpage.Ref{JS: expr}} }

// String describes the reference for error messages.
func (r Ref) String() string { return r.r.String() }

// resolve finds the element of r and loads the library in its world.
func (c *Capturer) resolve(ctx context.Context, r Ref, group string) (*lib, runtime.RemoteObjectID, error) {
	return c.kit.Resolve(ctx, c.t, r.r, group)
}
