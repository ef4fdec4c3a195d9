package upload

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

var (
	//go:embed js/upload.js
	libJS string
	//go:embed js/call.js
	callJS string
	//go:embed js/ref.js
	refJS string
)

var groupSeq atomic.Int64

// lib is the in-page library of one upload, in the world of its target
// element. It and the bytes it collects belong to the object group, which
// the upload releases at its end.
type lib struct {
	t     *chromedp.Target
	obj   runtime.RemoteObjectID
	group string
}

func newGroup() string { return "livetab-upload-" + strconv.FormatInt(groupSeq.Add(1), 10) }

func releaseGroup(t *chromedp.Target, group string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	cdp.Call(ctx, t, runtime.ReleaseObjectGroup, runtime.ReleaseObjectGroupParams{ObjectGroup: group})
}

// newLib loads the library into the world of el, or into the main world
// when el is "".
func newLib(ctx context.Context, t *chromedp.Target, el runtime.RemoteObjectID, group string) (*lib, error) {
	var ro *runtime.RemoteObject
	var exc *runtime.ExceptionDetails
	if el != "" {
		res, err := cdp.Call(ctx, t, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
			FunctionDeclaration: libJS, ObjectID: el, ObjectGroup: group, Silent: new(true),
		})
		if err != nil {
			return nil, tabErr(fmt.Errorf("upload: loading the upload library: %w", err))
		}
		ro, exc = res.Result, res.ExceptionDetails
	} else {
		res, err := cdp.Call(ctx, t, runtime.Evaluate, runtime.EvaluateParams{
			Expression: "(" + libJS + ")()", ObjectGroup: group, Silent: new(true),
		})
		if err != nil {
			return nil, tabErr(fmt.Errorf("upload: loading the upload library: %w", err))
		}
		ro, exc = res.Result, res.ExceptionDetails
	}
	if exc != nil {
		return nil, fmt.Errorf("upload: loading the upload library: %s", exceptionText(exc))
	}
	return &lib{t: t, obj: ro.ObjectID, group: group}, nil
}

// jsError is a failure the library reported as {err: code, msg: text}.
type jsError struct {
	code string
	msg  string
}

func (e *jsError) Error() string { return e.msg }

func (e *jsError) Unwrap() error {
	switch e.code {
	case "notinput":
		return ErrNotFileInput
	case "disabled", "multiple", "accept", "rejected", "nodrop":
		return ErrRejected
	}
	return nil
}

func val(v any) *runtime.CallArgument {
	b, _ := jsonv2.Marshal(v)
	return &runtime.CallArgument{Value: b}
}

func obj(id runtime.RemoteObjectID) *runtime.CallArgument {
	return &runtime.CallArgument{ObjectID: id}
}

func (l *lib) invoke(ctx context.Context, door string, byValue bool, name string, args []*runtime.CallArgument) (*runtime.RemoteObject, error) {
	res, err := cdp.Call(ctx, l.t, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: door,
		ObjectID:            l.obj,
		Arguments:           append([]*runtime.CallArgument{val(name)}, args...),
		ReturnByValue:       new(byValue),
		AwaitPromise:        new(true),
		Silent:              new(true),
		ObjectGroup:         l.group,
	})
	if err != nil {
		return nil, tabErr(fmt.Errorf("upload library %s: %w", name, err))
	}
	if res.ExceptionDetails != nil {
		return nil, fmt.Errorf("upload library %s: %s", name, exceptionText(res.ExceptionDetails))
	}
	return res.Result, nil
}

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
		return fmt.Errorf("upload: decoding the result of %s: %w", name, err)
	}
	if r.Err != "" {
		return &jsError{code: r.Err, msg: r.Msg}
	}
	if out != nil && len(r.OK) > 0 {
		if err := jsonv2.Unmarshal(r.OK, out); err != nil {
			return fmt.Errorf("upload: decoding the result of %s: %w", name, err)
		}
	}
	return nil
}

// ref runs a library function that returns an element by reference.
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

func exceptionText(d *runtime.ExceptionDetails) string {
	if d.Exception != nil && d.Exception.Description != "" {
		return d.Exception.Description
	}
	return d.Text
}

// tabErr explains a failed command when the tab closed or navigated.
func tabErr(err error) error {
	if err == nil || errors.Is(err, ErrTabClosed) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	msg := err.Error()
	if errors.Is(err, chromedp.ErrTargetDetached) ||
		strings.Contains(msg, "Cannot find context with specified id") ||
		strings.Contains(msg, "Could not find object with given id") ||
		strings.Contains(msg, "Execution context was destroyed") ||
		strings.Contains(msg, "Inspected target navigated or closed") {
		return fmt.Errorf("%w (or navigated away): %w", ErrTabClosed, err)
	}
	return err
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
// holds; the upload does not release it.
func Object(id runtime.RemoteObjectID) Ref { return Ref{object: id} }

// JS refers to the element a JavaScript expression evaluates to in the
// page's main world.
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
func resolve(ctx context.Context, t *chromedp.Target, r Ref, group string) (*lib, runtime.RemoteObjectID, error) {
	var el runtime.RemoteObjectID
	switch {
	case r.css != "":
		l, err := newLib(ctx, t, "", group)
		if err != nil {
			return nil, "", err
		}
		el, err = l.ref(ctx, "find", val(r.css))
		if err != nil {
			return nil, "", err
		}
		if el == "" {
			return nil, "", fmt.Errorf("%w: nothing matches %s; wait for it first (chromedp.WaitReady) or check the selector", ErrNotFound, r)
		}
		return l, el, nil
	case r.backend != 0:
		res, err := cdp.Call(ctx, t, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: r.backend, ObjectGroup: group})
		if err != nil {
			return nil, "", fmt.Errorf("%w: %s: %w", ErrNotFound, r, tabErr(err))
		}
		el = res.Object.ObjectID
	case r.object != "":
		el = r.object
	case r.js != "":
		res, err := cdp.Call(ctx, t, runtime.Evaluate, runtime.EvaluateParams{Expression: r.js, ObjectGroup: group, Silent: new(true)})
		if err != nil {
			return nil, "", tabErr(fmt.Errorf("upload: evaluating %s: %w", r, err))
		}
		if res.ExceptionDetails != nil {
			return nil, "", fmt.Errorf("upload: evaluating %s: %s", r, exceptionText(res.ExceptionDetails))
		}
		if res.Result.Subtype != "node" {
			return nil, "", fmt.Errorf("%w: %s gave a %s, not an element", ErrNotFound, r, res.Result.Type)
		}
		el = res.Result.ObjectID
	default:
		return nil, "", fmt.Errorf("%w: empty Ref: use CSS, BackendNode, Object or JS", ErrNotFound)
	}
	l, err := newLib(ctx, t, el, group)
	if err != nil {
		return nil, "", err
	}
	return l, el, nil
}
