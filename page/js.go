package page

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

var (
	//go:embed js/lib.js
	libJS string
	//go:embed js/reader.js
	readerJS string
	//go:embed js/call.js
	callJS string
	//go:embed js/frameel.js
	frameElJS string
	//go:embed js/ping.js
	pingJS string
	//go:embed js/elementof.js
	elementOfJS string

	libExpr = "(" + libJS + ")(" + readerJS + ")"
)

// objectGroup holds every object the Page keeps in a page, so that one
// release frees them.
const objectGroup = "livetab-page"

// session is one JavaScript world the Page runs its library in: the main
// world of the tab, or a cross-origin iframe (its own target, or an isolated
// world of an in-process frame).
type session struct {
	ctx     context.Context // chromedp context of the target
	cancel  context.CancelFunc
	main    bool
	execCtx runtime.ExecutionContextID // 0: the default context of the target
	frame   int                        // frame index in the snapshot
	frameID cdp.FrameID
	navSeq  uint64 // main-frame navigation the session belongs to

	lib runtime.RemoteObjectID // guarded by tab.mu
}

type libs struct {
	main   *session
	frames map[cdp.FrameID]*session
}

// jsError is a failure the library reported: {err: code, msg: text}.
type jsError struct {
	Code string
	Msg  string
}

func (e *jsError) Error() string { return e.Msg }

// elemErr turns a library failure about ref into an *ElementError.
func elemErr(ref Ref, err error) error {
	var je *jsError
	if errors.As(err, &je) && je.Code != "js" {
		return &ElementError{Ref: ref, Code: je.Code, Msg: je.Msg}
	}
	return err
}

// sctx is the context for a call in s: the action's cancellation and
// deadline with the chromedp context of s's target.
func (a *action) sctx(s *session) (context.Context, context.CancelFunc) {
	if s.ctx == a.t.ctx {
		return a.ctx, func() {}
	}
	var ctx context.Context
	var cancel context.CancelFunc
	if dl, ok := a.ctx.Deadline(); ok {
		ctx, cancel = context.WithDeadline(s.ctx, dl)
	} else {
		ctx, cancel = context.WithCancel(s.ctx)
	}
	stop := context.AfterFunc(a.ctx, cancel)
	return ctx, func() { stop(); cancel() }
}

func (a *action) ensureLib(s *session) (runtime.RemoteObjectID, error) {
	a.t.mu.Lock()
	lib := s.lib
	a.t.mu.Unlock()
	if lib != "" {
		return lib, nil
	}
	ctx, cancel := a.sctx(s)
	defer cancel()
	res, err := chromedp.Call(ctx, runtime.Evaluate, runtime.EvaluateParams{
		Expression:  libExpr,
		ObjectGroup: objectGroup,
		ContextID:   s.execCtx,
		Silent:      new(true),
	})
	if err != nil {
		return "", fmt.Errorf("loading the page library: %w", err)
	}
	if res.ExceptionDetails != nil {
		return "", fmt.Errorf("loading the page library: %s", exceptionText(res.ExceptionDetails))
	}
	a.t.mu.Lock()
	s.lib = res.Result.ObjectID
	a.t.mu.Unlock()
	return s.lib, nil
}

func (a *action) dropLib(s *session, lib runtime.RemoteObjectID) {
	a.t.mu.Lock()
	if s.lib == lib {
		s.lib = ""
	}
	a.t.mu.Unlock()
}

// call runs function name of the library in s with args and decodes its
// result into out. A library lost to a navigation is loaded again once; its
// fresh registry then refuses old element indexes, as it should.
func (a *action) call(s *session, name string, out any, args ...any) error {
	if args == nil {
		args = []any{}
	}
	argv, err := jsonv2.Marshal(args)
	if err != nil {
		return fmt.Errorf("encoding the arguments of %s: %w", name, err)
	}
	namev, _ := jsonv2.Marshal(name)
	for attempt := 0; ; attempt++ {
		lib, err := a.ensureLib(s)
		if err != nil {
			return err
		}
		ctx, cancel := a.sctx(s)
		res, err := chromedp.Call(ctx, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
			FunctionDeclaration: callJS,
			ObjectID:            lib,
			Arguments:           []*runtime.CallArgument{{Value: namev}, {Value: argv}},
			ReturnByValue:       new(true),
			Silent:              new(true),
		})
		cancel()
		if err == nil && res.ExceptionDetails != nil {
			err = errors.New(exceptionText(res.ExceptionDetails))
		}
		if err != nil {
			if contextGone(err) && attempt == 0 {
				a.dropLib(s, lib)
				continue
			}
			return err
		}
		var r struct {
			OK  jsonv2.Value `json:"ok"`
			Err string       `json:"err"`
			Msg string       `json:"msg"`
		}
		if err := jsonv2.Unmarshal(res.Result.Value, &r); err != nil {
			return fmt.Errorf("decoding the result of %s: %w", name, err)
		}
		if r.Err != "" {
			return &jsError{Code: r.Err, Msg: r.Msg}
		}
		if out != nil && len(r.OK) > 0 {
			if err := jsonv2.Unmarshal(r.OK, out); err != nil {
				return fmt.Errorf("decoding the result of %s: %w", name, err)
			}
		}
		return nil
	}
}

// pollInterval is how often waits that depend on page state look again.
const pollInterval = 50 * time.Millisecond

func exceptionText(d *runtime.ExceptionDetails) string {
	if d.Exception != nil && d.Exception.Description != "" {
		return d.Exception.Description
	}
	return d.Text
}
