package page

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/internal/inpage"
)

var (
	//go:embed js/lib.js
	libJS string
	//go:embed js/reader.js
	readerJS string
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

// elemErr turns a library failure about ref into an *ElementError.
func elemErr(ref Ref, err error) error {
	var je *inpage.Error
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
		return "", inpage.Threw("loading the page library", res.ExceptionDetails)
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
// result into out; the library's {err} answer is an *inpage.Error. A
// library lost to a navigation is loaded again once; its fresh registry
// then refuses old element indexes, as it should.
func (a *action) call(s *session, name string, out any, args ...any) error {
	argv, err := inpage.Vals(args...)
	if err != nil {
		return fmt.Errorf("encoding the arguments of %s: %w", name, err)
	}
	for attempt := 0; ; attempt++ {
		lib, err := a.ensureLib(s)
		if err != nil {
			return err
		}
		ctx, cancel := a.sctx(s)
		res, err := chromedp.Call(ctx, runtime.CallFunctionOn, inpage.CallParams(lib, "", name, argv...))
		cancel()
		if err == nil {
			err = inpage.Decode(name, res, out)
		}
		var je *inpage.Error
		if err != nil && !errors.As(err, &je) && contextGone(err) && attempt == 0 {
			a.dropLib(s, lib)
			continue
		}
		return err
	}
}

// pollInterval is how often waits that depend on page state look again.
const pollInterval = 50 * time.Millisecond
