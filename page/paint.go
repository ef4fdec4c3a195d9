package page

import (
	"context"
	"strconv"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// paintWait bounds the wait for an out-of-process frame to draw: a tab in
// the background draws nothing, and a click there goes on after it.
const paintWait = 500 * time.Millisecond

// paintedJS resolves once the frame has drawn twice.
const paintedJS = `function(ms) {
  return new Promise((resolve) => {
    setTimeout(resolve, ms);
    requestAnimationFrame(() => requestAnimationFrame(() => resolve()));
  });
}`

// painted waits until the page of s has drawn twice, at most paintWait.
// Chrome routes a mouse event into an out-of-process frame only once the
// compositor has drawn the frame into its parent; until then the event goes
// to the parent page, onto the <iframe> element, and the click is lost. A
// click on a cross-origin frame's button just after load was lost 2 to 5
// times in 30 so (the parent page got a mousedown on the <iframe>), while
// typing into the same frame (focus by script, keys to the focused frame)
// worked. Waiting on the frame alone still lost 4 in 30; the frame and then
// its parent lost none.
func (a *action) painted(s *session) {
	lib, err := a.ensureLib(s)
	if err != nil {
		return // point, which comes next, reports what is wrong
	}
	ctx, cancel := a.sctx(s)
	defer cancel()
	ctx, cancelWait := context.WithTimeout(ctx, 2*paintWait)
	defer cancelWait()
	ms := jsonv2.Value(strconv.FormatInt(paintWait.Milliseconds(), 10))
	chromedp.Call(ctx, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: paintedJS,
		ObjectID:            lib,
		Arguments:           []*runtime.CallArgument{{Value: ms}},
		AwaitPromise:        new(true),
		Silent:              new(true),
	})
}
