// Package hit asks the browser, not the page, where a trusted input event
// lands. A page's own JavaScript answers elementFromPoint and
// document.activeElement as it likes (it may replace them on the
// prototypes), and a frame of another site that covers an element, or
// takes the focus, gets the press or the keys: a check made in the page's
// world is advice, this one is not.
package hit

import (
	"context"
	_ "embed"
	"fmt"
	"math"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
)

// Node is what the browser's hit test found.
type Node struct {
	Backend cdp.BackendNodeID
	Name    string // lower case, as "iframe"
	// Frame is the frame a frame owner (iframe, frame, object, embed,
	// fencedframe) shows: what lies under the point is that frame's
	// document, which the browser gives the event to. Empty for any
	// other node.
	Frame cdp.FrameID
	URL   string // the frame owner's src, or data, when it has one
}

// Owner says whether n shows a frame of its own.
func (n Node) Owner() bool { return n.Frame != "" }

// String describes n for an error: the node and the address it shows.
func (n Node) String() string {
	if n.URL != "" {
		return fmt.Sprintf("<%s src=%q>", n.Name, n.URL)
	}
	return "<" + n.Name + ">"
}

// At is the node a mouse event at x, y (CSS pixels of the viewport of s's
// top frame, as Input.dispatchMouseEvent takes them) lands on, as the browser's hit test finds it; ok is false
// where nothing is. A frame of another process is its frame owner.
func At(ctx context.Context, s cdp.Session, x, y float64) (n Node, ok bool, err error) {
	// Input events take the point in the viewport; the hit test, in the
	// document: on a scrolled page it looked where the press did not
	// land (red team, 2026-11-30).
	m, err := cdp.Call(ctx, s, page.GetLayoutMetrics, cdp.Empty{})
	if err != nil {
		return n, false, fmt.Errorf("reading the viewport: %w", err)
	}
	// The layout viewport's scroll is the frame's own, in the top frame
	// and in an out-of-process frame's target alike; a pinch zoom is
	// not taken into account.
	if v := m.CSSLayoutViewport; v != nil {
		x, y = x+float64(v.PageX), y+float64(v.PageY)
	}
	r, err := cdp.Call(ctx, s, dom.GetNodeForLocation, dom.GetNodeForLocationParams{
		X: int64(math.Floor(x)), Y: int64(math.Floor(y)), IncludeUserAgentShadowDOM: new(true),
	})
	if err != nil {
		if strings.Contains(err.Error(), "No node found") {
			return n, false, nil
		}
		return n, false, fmt.Errorf("hit test at %.0f,%.0f: %w", x, y, err)
	}
	n, err = describe(ctx, s, dom.DescribeNodeParams{BackendNodeID: r.BackendNodeID})
	return n, err == nil, err
}

// Backend is the node of a page object, such as an element the caller
// will press on.
func Backend(ctx context.Context, s cdp.Session, obj runtime.RemoteObjectID) (cdp.BackendNodeID, error) {
	n, err := describe(ctx, s, dom.DescribeNodeParams{ObjectID: obj})
	return n.Backend, err
}

func describe(ctx context.Context, s cdp.Session, p dom.DescribeNodeParams) (Node, error) {
	d, err := cdp.Call(ctx, s, dom.DescribeNode, p)
	if err != nil {
		return Node{}, fmt.Errorf("describing a node: %w", err)
	}
	if d.Node == nil {
		return Node{}, fmt.Errorf("describing a node: no node")
	}
	n := Node{Backend: d.Node.BackendNodeID, Name: strings.ToLower(d.Node.LocalName), Frame: d.Node.FrameID}
	if n.Name == "" {
		n.Name = strings.ToLower(d.Node.NodeName)
	}
	if n.Owner() {
		n.URL = attr(d.Node.Attributes, "src")
		if n.URL == "" {
			n.URL = attr(d.Node.Attributes, "data")
		}
	}
	return n, nil
}

// attr reads an attribute of DOM.describeNode's flat name, value list.
func attr(kv []string, name string) string {
	for i := 0; i+1 < len(kv); i += 2 {
		if strings.EqualFold(kv[i], name) {
			return kv[i+1]
		}
	}
	return ""
}

// World is an isolated world in frame (a frame of s; empty: s's top
// frame), where the page's changes to the DOM's prototypes do not reach.
// The browser keeps one per frame and name, until the frame navigates.
func World(ctx context.Context, s cdp.Session, frame cdp.FrameID) (runtime.ExecutionContextID, error) {
	if frame == "" {
		t, err := cdp.Call(ctx, s, page.GetFrameTree, cdp.Empty{})
		if err != nil {
			return 0, fmt.Errorf("reading the frame tree: %w", err)
		}
		frame = t.FrameTree.Frame.ID
	}
	w, err := cdp.Call(ctx, s, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: frame, WorldName: "livetab-hit"})
	if err != nil {
		return 0, fmt.Errorf("reaching the frame's focus: %w", err)
	}
	return w.ExecutionContextID, nil
}

// focusedFrame is, in an isolated world, the focused element of the
// document when it shows a frame the world cannot enter (js/focusedframe.js).
//
//go:embed js/focusedframe.js
var focusedFrame string

// FocusedFrame is the frame owner that holds the focus of the document of
// world (see World), if one does and shows a frame of another origin:
// keys sent now go into that frame. ok is false when the focus is in the
// document (or a frame of its origin).
func FocusedFrame(ctx context.Context, s cdp.Session, world runtime.ExecutionContextID) (n Node, ok bool, err error) {
	r, err := cdp.Call(ctx, s, runtime.Evaluate, runtime.EvaluateParams{
		Expression: focusedFrame, ContextID: world, Silent: new(true),
	})
	if err != nil {
		return n, false, fmt.Errorf("reading the focus: %w", err)
	}
	if r.ExceptionDetails != nil {
		return n, false, fmt.Errorf("reading the focus: %s", r.ExceptionDetails.Text)
	}
	if r.Result == nil || r.Result.ObjectID == "" {
		return n, false, nil
	}
	defer cdp.Call(ctx, s, runtime.ReleaseObject, runtime.ReleaseObjectParams{ObjectID: r.Result.ObjectID}) //nolint:errcheck // best effort
	n, err = describe(ctx, s, dom.DescribeNodeParams{ObjectID: r.Result.ObjectID})
	// An <object> showing an image shows no frame.
	return n, err == nil && n.Owner(), err
}

// ContentOrigin is where the content box of node (a frame owner, in s's
// frame) begins in the viewport of s's top frame: a point of that viewport
// less the origin is the point in the frame's own viewport.
func ContentOrigin(ctx context.Context, s cdp.Session, node cdp.BackendNodeID) (x, y float64, err error) {
	b, err := cdp.Call(ctx, s, dom.GetBoxModel, dom.GetBoxModelParams{BackendNodeID: node})
	if err != nil {
		return 0, 0, fmt.Errorf("reading a frame's box: %w", err)
	}
	if b.Model == nil || len(b.Model.Content) < 2 {
		return 0, 0, fmt.Errorf("reading a frame's box: no box")
	}
	return b.Model.Content[0], b.Model.Content[1], nil
}
