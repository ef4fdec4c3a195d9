package upload

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/internal/inpage"
)

//go:embed js/upload.js
var libJS string

var groupSeq atomic.Int64

// lib is the in-page library of one upload, in the world of its target
// element. It and the bytes it collects belong to the object group, which
// the upload releases at its end.
type lib = inpage.Lib

var (
	val = inpage.Val
	obj = inpage.Obj
)

// kit says how the upload library loads and how its errors read.
var kit = &inpage.Kit{
	Source:   libJS,
	Name:     "upload library",
	Prefix:   "upload: ",
	WaitHint: "chromedp.WaitReady",
	Codes: map[string]error{
		"notinput": ErrNotFileInput,
		"disabled": ErrRejected,
		"multiple": ErrRejected,
		"accept":   ErrRejected,
		"rejected": ErrRejected,
		"nodrop":   ErrRejected,
	},
	NotFound: ErrNotFound,
	TabErr:   tabErr,
}

func newGroup() string { return "livetab-upload-" + strconv.FormatInt(groupSeq.Add(1), 10) }

func releaseGroup(t *chromedp.Target, group string) { inpage.Release(t, group) }

// tabErr explains a failed command when the tab closed or navigated.
func tabErr(err error) error {
	if err == nil || errors.Is(err, ErrTabClosed) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if errors.Is(err, chromedp.ErrTargetDetached) || inpage.Navigated(err) {
		return fmt.Errorf("%w (or navigated away): %w", ErrTabClosed, err)
	}
	return err
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
// holds; the upload does not release it.
func Object(id runtime.RemoteObjectID) Ref { return Ref{inpage.Ref{Object: id}} }

// JS refers to the element a JavaScript expression evaluates to in the
// page's main world.
func JS(expr string) Ref { return Ref{inpage.Ref{JS: expr}} }

// String describes the reference for error messages.
func (r Ref) String() string { return r.r.String() }

// resolve finds the element of r and loads the library in its world.
func resolve(ctx context.Context, t *chromedp.Target, r Ref, group string) (*lib, runtime.RemoteObjectID, error) {
	return kit.Resolve(ctx, t, r.r, group)
}
