// Package inpage is the one way Go calls a JavaScript library in a page:
// one door (js/call.js), one form of answer ({ok} or {err: code, msg:
// text}, read by [Decode]) and one error type ([Error]). capture and upload
// load their library through a Kit, in the world of an element or in the
// main world, with their own error codes and wording; page, which keeps a
// library per JavaScript world and reloads it after a navigation, makes
// its calls with [CallParams] and [Decode] on its own sessions.
//
// A library is a function expression that returns an object with a method
// call(name, args) answering {ok} or {err: code, msg: text}, plus the
// methods that answer with elements, which Lib.Ref calls directly.
//
// It depends on chromedp and cdproto only, so that page, capture and upload
// keep working on any chromedp tab.
package inpage

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

var (
	//go:embed js/call.js
	callJS string
	//go:embed js/ref.js
	refJS string
)

// Kit is what a package brings: its library and how its errors read.
type Kit struct {
	// Source is the library, a JavaScript function expression.
	Source string
	// Name names the library in messages, e.g. "capture library".
	Name string
	// Prefix starts the messages that do not name the library, e.g.
	// "upload: "; it may be "".
	Prefix string
	// WaitHint is the chromedp action a "nothing matches" error suggests.
	WaitHint string
	// Codes map the library's error codes onto the package's sentinels.
	Codes map[string]error
	// NotFound is the package's sentinel for an element that is not there.
	NotFound error
	// TabErr explains a failed CDP command, e.g. as the tab having closed.
	TabErr func(error) error
}

// Lib is a library loaded in one JavaScript world. It and everything it
// holds belong to an object group, which the caller releases with Release.
type Lib struct {
	k     *Kit
	t     *chromedp.Target
	obj   runtime.RemoteObjectID
	group string
}

// Object is the remote object of the library itself, for calls a package
// makes through its own doors.
func (l *Lib) Object() runtime.RemoteObjectID { return l.obj }

// Release frees the group's objects. It runs on its own short context: the
// caller's may be the cancelled one.
func Release(t *chromedp.Target, group string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	cdp.Call(ctx, t, runtime.ReleaseObjectGroup, runtime.ReleaseObjectGroupParams{ObjectGroup: group})
}

// Load loads the library into the world of el, or into the main world of
// the tab when el is "".
func (k *Kit) Load(ctx context.Context, t *chromedp.Target, el runtime.RemoteObjectID, group string) (*Lib, error) {
	var ro *runtime.RemoteObject
	var exc *runtime.ExceptionDetails
	if el != "" {
		res, err := cdp.Call(ctx, t, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
			FunctionDeclaration: k.Source,
			ObjectID:            el,
			ObjectGroup:         group,
			Silent:              new(true),
		})
		if err != nil {
			return nil, k.TabErr(fmt.Errorf("%sloading the %s: %w", k.Prefix, k.Name, err))
		}
		ro, exc = res.Result, res.ExceptionDetails
	} else {
		res, err := cdp.Call(ctx, t, runtime.Evaluate, runtime.EvaluateParams{
			Expression:  "(" + k.Source + ")()",
			ObjectGroup: group,
			Silent:      new(true),
		})
		if err != nil {
			return nil, k.TabErr(fmt.Errorf("%sloading the %s: %w", k.Prefix, k.Name, err))
		}
		ro, exc = res.Result, res.ExceptionDetails
	}
	if exc != nil {
		return nil, Threw(fmt.Sprintf("%sloading the %s", k.Prefix, k.Name), exc)
	}
	return &Lib{k: k, t: t, obj: ro.ObjectID, group: group}, nil
}

// Error is a failure the library reported as {err: code, msg: text}. It
// unwraps to the sentinel a Kit maps the code onto, if any.
type Error struct {
	Code string
	Msg  string
	kind error
}

func (e *Error) Error() string { return e.Msg }

// Words is the message of a script's exception the library caught (code
// "js"): the page's words, as an Exception's are; "" for the library's
// own answers.
func (e *Error) Words() string {
	if e.Code == "js" {
		return e.Msg
	}
	return ""
}

// Unwrap returns the package's sentinel for the code, or nil.
func (e *Error) Unwrap() error { return e.kind }

// Error makes the error of a {err: code, msg: text} answer.
func (k *Kit) Error(code, msg string) error {
	return &Error{Code: code, Msg: msg, kind: k.Codes[code]}
}

// Exception is a JavaScript exception a call threw instead of answering.
type Exception struct {
	Details *runtime.ExceptionDetails
}

func (e *Exception) Error() string { return ExceptionText(e.Details) }

// Words is the exception's text: the page's, since the page can make any
// script throw what it likes (it can replace the built-ins a library
// calls), so a model must read it as page text (page.ErrorText).
func (e *Exception) Words() string {
	if e.Details == nil {
		return ""
	}
	return ExceptionText(e.Details)
}

// PageWords is an error whose Words came from the page: a script's
// exception. Doing says what livetab was doing.
type PageWords struct {
	Doing string
	Said  string
}

func (e *PageWords) Error() string { return e.Doing + ": " + e.Said }

// Words is what the page said.
func (e *PageWords) Words() string { return e.Said }

// WordsOf is the page's words err carries (an Exception, a library's "js"
// answer, a PageWords), "" when none: a model must read them as page text.
func WordsOf(err error) string {
	var said interface{ Words() string }
	if errors.As(err, &said) {
		return said.Words()
	}
	return ""
}

// Threw is the error of a script that threw d while livetab was doing
// what doing says.
func Threw(doing string, d *runtime.ExceptionDetails) error {
	return &PageWords{Doing: doing, Said: ExceptionText(d)}
}

// CallParams are the Runtime.callFunctionOn params that run function name
// of the library object lib with args through the door, answered by value
// (a promise is awaited). What the call keeps goes into group ("": none).
func CallParams(lib runtime.RemoteObjectID, group, name string, args ...*runtime.CallArgument) runtime.CallFunctionOnParams {
	return runtime.CallFunctionOnParams{
		FunctionDeclaration: callJS,
		ObjectID:            lib,
		Arguments:           append([]*runtime.CallArgument{Val(name)}, args...),
		ReturnByValue:       new(true),
		AwaitPromise:        new(true),
		Silent:              new(true),
		ObjectGroup:         group,
	}
}

// Decode reads the answer of a call made with [CallParams] to function
// name: {ok} decodes into out (when out is not nil), {err, msg} comes back
// as an *Error that unwraps to nothing (a Kit maps the codes), and a thrown
// exception as an *Exception.
func Decode(name string, res runtime.CallFunctionOnResult, out any) error {
	if res.ExceptionDetails != nil {
		return &Exception{Details: res.ExceptionDetails}
	}
	var r struct {
		OK  jsonv2.Value `json:"ok"`
		Err string       `json:"err"`
		Msg string       `json:"msg"`
	}
	if res.Result == nil {
		return fmt.Errorf("decoding the result of %s: no result", name)
	}
	if err := jsonv2.Unmarshal(res.Result.Value, &r); err != nil {
		return fmt.Errorf("decoding the result of %s: %w", name, err)
	}
	if r.Err != "" {
		return &Error{Code: r.Err, Msg: r.Msg}
	}
	if out != nil && len(r.OK) > 0 {
		if err := jsonv2.Unmarshal(r.OK, out); err != nil {
			return fmt.Errorf("decoding the result of %s: %w", name, err)
		}
	}
	return nil
}

// Val is a call argument passed by value.
func Val(v any) *runtime.CallArgument {
	b, _ := jsonv2.Marshal(v)
	return &runtime.CallArgument{Value: b}
}

// Obj is a call argument passed by reference.
func Obj(id runtime.RemoteObjectID) *runtime.CallArgument {
	return &runtime.CallArgument{ObjectID: id}
}

// Vals are call arguments passed by value, or the error of the first
// that does not encode.
func Vals(args ...any) ([]*runtime.CallArgument, error) {
	out := make([]*runtime.CallArgument, len(args))
	for i, a := range args {
		b, err := jsonv2.Marshal(a)
		if err != nil {
			return nil, fmt.Errorf("encoding argument %d: %w", i+1, err)
		}
		out[i] = &runtime.CallArgument{Value: b}
	}
	return out, nil
}

// ref runs a library function that answers with an object, by reference.
func (l *Lib) ref(ctx context.Context, name string, args []*runtime.CallArgument) (*runtime.RemoteObject, error) {
	p := CallParams(l.obj, l.group, name, args...)
	p.FunctionDeclaration, p.ReturnByValue = refJS, new(false)
	res, err := cdp.Call(ctx, l.t, runtime.CallFunctionOn, p)
	if err != nil {
		return nil, l.k.TabErr(fmt.Errorf("%s %s: %w", l.k.Name, name, err))
	}
	if res.ExceptionDetails != nil {
		return nil, Threw(l.k.Name+" "+name, res.ExceptionDetails)
	}
	return res.Result, nil
}

// Call runs a library function and decodes its {ok} result into out; an
// {err} result comes back as an *Error that unwraps to the Kit's sentinel.
func (l *Lib) Call(ctx context.Context, name string, out any, args ...*runtime.CallArgument) error {
	return l.call(ctx, CallParams(l.obj, l.group, name, args...), name, out)
}

// CallGesture is Call run as if from a person's click (userGesture), for
// what the browser allows only then, such as a download that does not
// count as an automatic one.
func (l *Lib) CallGesture(ctx context.Context, name string, out any, args ...*runtime.CallArgument) error {
	p := CallParams(l.obj, l.group, name, args...)
	p.UserGesture = new(true)
	return l.call(ctx, p, name, out)
}

func (l *Lib) call(ctx context.Context, p runtime.CallFunctionOnParams, name string, out any) error {
	res, err := cdp.Call(ctx, l.t, runtime.CallFunctionOn, p)
	if err != nil {
		return l.k.TabErr(fmt.Errorf("%s %s: %w", l.k.Name, name, err))
	}
	err = Decode(name, res, out)
	var le *Error
	var exc *Exception
	switch {
	case err == nil:
		return nil
	case errors.As(err, &le):
		return l.k.Error(le.Code, le.Msg)
	case errors.As(err, &exc):
		return fmt.Errorf("%s %s: %w", l.k.Name, name, exc)
	}
	return fmt.Errorf("%s%w", l.k.Prefix, err)
}

// Ref runs a library function that returns an element, kept by reference
// in the group; "" when it returned null.
func (l *Lib) Ref(ctx context.Context, name string, args ...*runtime.CallArgument) (runtime.RemoteObjectID, error) {
	ro, err := l.ref(ctx, name, args)
	if err != nil {
		return "", err
	}
	if ro.ObjectID == "" || ro.Subtype == "null" {
		return "", nil
	}
	return ro.ObjectID, nil
}

// ExceptionText is the most telling text of a JavaScript exception.
func ExceptionText(d *runtime.ExceptionDetails) string {
	if d.Exception != nil && d.Exception.Description != "" {
		return d.Exception.Description
	}
	return d.Text
}

// Navigated reports whether err says the page's context or objects are gone,
// as they are when the tab closed or navigated under a command (the
// document was replaced).
func Navigated(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	for _, m := range []string{
		"Cannot find context with specified id",
		"Cannot find default execution context",
		"Execution context was destroyed",
		"Could not find object with given id",
		"Cannot find object with id",
		"Inspected target navigated or closed",
	} {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}

// Ref points at an element of the page by exactly one of its fields.
type Ref struct {
	CSS     string
	Backend cdp.BackendNodeID
	Object  runtime.RemoteObjectID
	JS      string
}

// String describes the reference for error messages.
func (r Ref) String() string {
	switch {
	case r.CSS != "":
		return "CSS " + strconv.Quote(r.CSS)
	case r.Backend != 0:
		return "backend node " + strconv.FormatInt(int64(r.Backend), 10)
	case r.Object != "":
		return "object " + string(r.Object)
	case r.JS != "":
		return "JS " + strconv.Quote(r.JS)
	}
	return "empty Ref"
}

// Resolve finds the element of r and loads the library in its world. A CSS
// selector is looked up by the library's find, which must return an element
// or null.
func (k *Kit) Resolve(ctx context.Context, t *chromedp.Target, r Ref, group string) (*Lib, runtime.RemoteObjectID, error) {
	var el runtime.RemoteObjectID
	switch {
	case r.CSS != "":
		l, err := k.Load(ctx, t, "", group)
		if err != nil {
			return nil, "", err
		}
		el, err = l.Ref(ctx, "find", Val(r.CSS))
		if err != nil {
			return nil, "", err
		}
		if el == "" {
			return nil, "", fmt.Errorf("%w: nothing matches %s; wait for it first (%s) or check the selector", k.NotFound, r, k.WaitHint)
		}
		return l, el, nil
	case r.Backend != 0:
		res, err := cdp.Call(ctx, t, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: r.Backend, ObjectGroup: group})
		if err != nil {
			return nil, "", fmt.Errorf("%w: %s: %w", k.NotFound, r, k.TabErr(err))
		}
		el = res.Object.ObjectID
	case r.Object != "":
		el = r.Object
	case r.JS != "":
		res, err := cdp.Call(ctx, t, runtime.Evaluate, runtime.EvaluateParams{Expression: r.JS, ObjectGroup: group, Silent: new(true)})
		if err != nil {
			return nil, "", k.TabErr(fmt.Errorf("%sevaluating %s: %w", k.Prefix, r, err))
		}
		if res.ExceptionDetails != nil {
			return nil, "", Threw(fmt.Sprintf("%sevaluating %s", k.Prefix, r), res.ExceptionDetails)
		}
		if res.Result.Subtype != "node" {
			return nil, "", fmt.Errorf("%w: %s gave a %s, not an element", k.NotFound, r, res.Result.Type)
		}
		el = res.Result.ObjectID
	default:
		return nil, "", fmt.Errorf("%w: empty Ref: use CSS, BackendNode, Object or JS", k.NotFound)
	}
	l, err := k.Load(ctx, t, el, group)
	if err != nil {
		return nil, "", err
	}
	return l, el, nil
}
