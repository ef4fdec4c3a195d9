package capture

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/runtime"
)

var (
	//go:embed js/capture.js
	libJS string
	//go:embed js/call.js
	callJS string
	//go:embed js/ref.js
	refJS string
	//go:embed js/read.js
	readJS string
)

// lib is the in-page library of one capture, in one JavaScript world. It
// and everything it holds belong to the object group, which the capture
// releases at its end.
type lib struct {
	c     *Capturer
	obj   runtime.RemoteObjectID
	group string
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
// registered. It runs on its own short context: the capture's may be the
// cancelled one.
func (c *Capturer) releaseGroup(group string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	cdp.Call(ctx, c.t, runtime.ReleaseObjectGroup, runtime.ReleaseObjectGroupParams{ObjectGroup: group})
}

// newLib loads the library into the world of el, or into the main world of
// the tab when el is "".
func (c *Capturer) newLib(ctx context.Context, el runtime.RemoteObjectID, group string) (*lib, error) {
	var obj *runtime.RemoteObject
	var exc *runtime.ExceptionDetails
	if el != "" {
		res, err := cdp.Call(ctx, c.t, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
			FunctionDeclaration: libJS,
			ObjectID:            el,
			ObjectGroup:         group,
			Silent:              new(true),
		})
		if err != nil {
			return nil, c.cdpErr(fmt.Errorf("loading the capture library: %w", err))
		}
		obj, exc = res.Result, res.ExceptionDetails
	} else {
		res, err := cdp.Call(ctx, c.t, runtime.Evaluate, runtime.EvaluateParams{
			Expression:  "(" + libJS + ")()",
			ObjectGroup: group,
			Silent:      new(true),
		})
		if err != nil {
			return nil, c.cdpErr(fmt.Errorf("loading the capture library: %w", err))
		}
		obj, exc = res.Result, res.ExceptionDetails
	}
	if exc != nil {
		return nil, fmt.Errorf("loading the capture library: %s", exceptionText(exc))
	}
	return &lib{c: c, obj: obj.ObjectID, group: group}, nil
}

// jsError is a failure the library reported as {err: code, msg: text}.
type jsError struct {
	code string
	msg  string
}

func (e *jsError) Error() string { return e.msg }

func (e *jsError) Unwrap() error {
	switch e.code {
	case "nomedia":
		return ErrNoMedia
	case "cors":
		return ErrCrossOrigin
	case "gone":
		return ErrGone
	case "http":
		return ErrHTTP
	case "notfound":
		return ErrNotFound
	}
	return nil
}

// val is a call argument passed by value.
func val(v any) *runtime.CallArgument {
	b, _ := jsonv2.Marshal(v)
	return &runtime.CallArgument{Value: b}
}

// obj is a call argument passed by reference.
func obj(id runtime.RemoteObjectID) *runtime.CallArgument {
	return &runtime.CallArgument{ObjectID: id}
}

func (l *lib) invoke(ctx context.Context, door string, byValue bool, name string, args []*runtime.CallArgument) (*runtime.RemoteObject, error) {
	res, err := cdp.Call(ctx, l.c.t, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: door,
		ObjectID:            l.obj,
		Arguments:           append([]*runtime.CallArgument{val(name)}, args...),
		ReturnByValue:       new(byValue),
		AwaitPromise:        new(true),
		Silent:              new(true),
		ObjectGroup:         l.group,
	})
	if err != nil {
		return nil, l.c.cdpErr(fmt.Errorf("capture library %s: %w", name, err))
	}
	if res.ExceptionDetails != nil {
		return nil, fmt.Errorf("capture library %s: %s", name, exceptionText(res.ExceptionDetails))
	}
	return res.Result, nil
}

// call runs a library function and decodes its {ok} result into out.
func (l *lib) call(ctx context.Context, name string, out any, args ...*runtime.CallArgument) error {
	ro, err := l.invoke(ctx, callJS, true, name, args)
	if err != nil {
		return err
	}
	var r struct {
		OK  jsonv2.Value `json:"ok"`
		Err string       `json:"err"`
		Msg string       `json:"msg"`
	}
	if err := jsonv2.Unmarshal(ro.Value, &r); err != nil {
		return fmt.Errorf("decoding the result of %s: %w", name, err)
	}
	if r.Err != "" {
		return &jsError{code: r.Err, msg: r.Msg}
	}
	if out != nil && len(r.OK) > 0 {
		if err := jsonv2.Unmarshal(r.OK, out); err != nil {
			return fmt.Errorf("decoding the result of %s: %w", name, err)
		}
	}
	return nil
}

// ref runs a library function that returns an element, kept by reference
// in the group; "" when it returned null.
func (l *lib) ref(ctx context.Context, name string, args ...*runtime.CallArgument) (runtime.RemoteObjectID, error) {
	ro, err := l.invoke(ctx, refJS, false, name, args)
	if err != nil {
		return "", err
	}
	if ro.ObjectID == "" || ro.Subtype == "null" {
		return "", nil
	}
	return ro.ObjectID, nil
}

// read returns bytes [off, off+n) of registered blob id.
func (l *lib) read(ctx context.Context, id, off int64, n int) ([]byte, error) {
	res, err := cdp.Call(ctx, l.c.t, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: readJS,
		ObjectID:            l.obj,
		Arguments:           []*runtime.CallArgument{val(id), val(off), val(n)},
		ReturnByValue:       new(true),
		AwaitPromise:        new(true),
		Silent:              new(true),
	})
	if err != nil {
		return nil, l.c.cdpErr(fmt.Errorf("reading bytes %d–%d in the page: %w", off, off+int64(n), err))
	}
	if res.ExceptionDetails != nil {
		return nil, fmt.Errorf("reading bytes %d–%d in the page: %s", off, off+int64(n), exceptionText(res.ExceptionDetails))
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
		return nil, &jsError{code: r.Err, msg: r.Msg}
	}
	var s string
	if err := jsonv2.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("decoding bytes from the page: %w", err)
	}
	return base64.StdEncoding.DecodeString(s)
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d.Exception != nil && d.Exception.Description != "" {
		return d.Exception.Description
	}
	return d.Text
}

// cdpErr explains a failed command when the tab closed or navigated under
// it: the capture cannot go on in either case.
func (c *Capturer) cdpErr(err error) error {
	if err == nil || errors.Is(err, ErrTabClosed) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	msg := err.Error()
	if strings.Contains(msg, "Cannot find context with specified id") ||
		strings.Contains(msg, "Could not find object with given id") ||
		strings.Contains(msg, "Execution context was destroyed") ||
		strings.Contains(msg, "Inspected target navigated or closed") {
		return fmt.Errorf("%w (or navigated away): %w", ErrTabClosed, err)
	}
	return c.tabErr(err)
}

// Ref points at an element of the page. Make one with CSS, BackendNode,
// Object or JS; the page package's snapshot indexes map onto these.
type Ref struct {
	css     string
	backend cdp.BackendNodeID
	object  runtime.RemoteObjectID
	js      string
}

// CSS refers to the first element matching a CSS selector, looking into open
// shadow roots when the document itself has no match.
func CSS(selector string) Ref { return Ref{css: selector} }

// BackendNode refers to an element by its DOM backend node id.
func BackendNode(id cdp.BackendNodeID) Ref { return Ref{backend: id} }

// Object refers to an element by a Runtime remote object id the caller
// holds; the capture does not release it.
func Object(id runtime.RemoteObjectID) Ref { return Ref{object: id} }

// JS refers to the element a JavaScript expression evaluates to in the
// page's main world, for example `document.querySelectorAll("img")[3]`.
func JS(expr string) Ref { return Ref{js: expr} }

// String describes the reference for error messages.
func (r Ref) String() string {
	switch {
	case r.css != "":
		return "CSS " + strconv.Quote(r.css)
	case r.backend != 0:
		return "backend node " + strconv.FormatInt(int64(r.backend), 10)
	case r.object != "":
		return "object " + string(r.object)
	case r.js != "":
		return "JS " + strconv.Quote(r.js)
	}
	return "empty Ref"
}

// resolve finds the element of r and loads the library in its world.
func (c *Capturer) resolve(ctx context.Context, r Ref, group string) (*lib, runtime.RemoteObjectID, error) {
	var el runtime.RemoteObjectID
	switch {
	case r.css != "":
		l, err := c.newLib(ctx, "", group)
		if err != nil {
			return nil, "", err
		}
		el, err = l.ref(ctx, "find", val(r.css))
		if err != nil {
			return nil, "", err
		}
		if el == "" {
			return nil, "", fmt.Errorf("%w: nothing matches %s; wait for it first (chromedp.WaitVisible) or check the selector", ErrNotFound, r)
		}
		return l, el, nil
	case r.backend != 0:
		res, err := cdp.Call(ctx, c.t, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: r.backend, ObjectGroup: group})
		if err != nil {
			return nil, "", fmt.Errorf("%w: %s: %w", ErrNotFound, r, c.cdpErr(err))
		}
		el = res.Object.ObjectID
	case r.object != "":
		el = r.object
	case r.js != "":
		res, err := cdp.Call(ctx, c.t, runtime.Evaluate, runtime.EvaluateParams{Expression: r.js, ObjectGroup: group, Silent: new(true)})
		if err != nil {
			return nil, "", c.cdpErr(fmt.Errorf("evaluating %s: %w", r, err))
		}
		if res.ExceptionDetails != nil {
			return nil, "", fmt.Errorf("evaluating %s: %s", r, exceptionText(res.ExceptionDetails))
		}
		if res.Result.Subtype != "node" {
			return nil, "", fmt.Errorf("%w: %s gave a %s, not an element", ErrNotFound, r, res.Result.Type)
		}
		el = res.Result.ObjectID
	default:
		return nil, "", fmt.Errorf("%w: empty Ref: use CSS, BackendNode, Object or JS", ErrNotFound)
	}
	l, err := c.newLib(ctx, el, group)
	if err != nil {
		return nil, "", err
	}
	return l, el, nil
}
