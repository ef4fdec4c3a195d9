package extcdp

import (
	"fmt"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"

	"github.com/livetab/livetab/internal/wire"
)

// A whole tree of a page (its DOM, its accessibility tree, a DOM snapshot)
// comes back from chrome.debugger as one message, which Chrome turns into
// objects on the browser's UI thread and again in the extension: measured
// on a page of 100,000 elements (TestRedTeamWholeTreeOfAHugePage), one
// Accessibility.getFullAXTree kept the person's browser from answering
// anything for 23.6 s and every other client for 35 s, and past 256 MiB
// the extension ends. A page makes itself that large at will, and agent
// frameworks ask for the whole tree on every step. So before passing one
// on, the relay counts the page's elements, in a world of its own that the
// page's scripts cannot lie to, and refuses past maxTreeElements with an
// error that names the bounded reads
// (docs/decisions/2026-11-27-a-whole-tree-of-a-huge-page-is-refused.md).

// maxTreeElements is the most elements a page may have for a whole tree of
// it to be passed on: at 25,000 the measured freeze is about a quarter of
// the 100,000's, and ordinary large pages stay below.
const maxTreeElements = 25000

// treeWorld is the isolated world the count runs in.
const treeWorld = "livetab-size"

// countElements counts the elements of a document, its open shadow roots
// and its same-origin frames, stopping past max. Closed shadow roots are
// beyond a script's reach.
const countElements = `(() => {
	const max = %d;
	let n = 0;
	const walk = (root) => {
		const all = root.querySelectorAll('*');
		n += all.length;
		for (let i = 0; i < all.length && n <= max; i++) {
			const e = all[i];
			if (e.shadowRoot) walk(e.shadowRoot);
			let d = null;
			try { d = e.contentDocument } catch {}
			if (d) walk(d);
		}
	};
	walk(document);
	return n;
})()`

// wholeTree reports whether m asks for a tree of the whole page, or of a
// node with no bound on depth. ok is false when its params do not decode.
func wholeTree(m *cdproto.Message) (whole, ok bool) {
	switch m.Method {
	case cdproto.CommandAccessibilityGetFullAXTree, cdproto.CommandDOMSnapshotCaptureSnapshot,
		"DOMSnapshot.getSnapshot", "DOM.getFlattenedDocument":
		return true, true
	case cdproto.CommandDOMGetDocument, cdproto.CommandDOMRequestChildNodes, cdproto.CommandDOMDescribeNode:
		var p struct {
			Depth *int64 `json:"depth"`
		}
		if len(m.Params) > 0 && jsonv2.Unmarshal(m.Params, &p, wire.Options) != nil {
			return false, false
		}
		return p.Depth != nil && (*p.Depth < 0 || *p.Depth > 8), true
	}
	return false, true
}

// guardTree answers m, and reports that it did, when it asks for a whole
// tree of a page past maxTreeElements, or when the page could not be
// counted. It waits for the count: the lane holds later commands meanwhile.
func (c *Client) guardTree(m *cdproto.Message, t *tab, sid string, s *session) bool {
	whole, ok := wholeTree(m)
	if !ok {
		c.fail(m.ID, m.SessionID, -32602, fmt.Sprintf("livetab: invalid %s params", m.Method))
		return true
	}
	if !whole || c.crashedAt(t, sid) {
		return false
	}
	n, err := c.countTree(t, sid, c.frameOf(t, sid, s))
	switch {
	case err != nil:
		c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab: %s was not sent: counting the page's elements first failed: %v; retry once the page answers", m.Method, err))
		return true
	case n > maxTreeElements:
		c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab refuses %s on a page of more than %d elements (this one has at least %d): Chrome hands the whole tree over in one message and turns it into objects on the browser's UI thread, which froze the person's browser for 24 s at 100,000 elements; read the page in parts: DOM.getDocument with a small depth, then DOM.requestChildNodes or DOM.querySelector, or Accessibility.getPartialAXTree / queryAXTree", m.Method, maxTreeElements, n))
		return true
	}
	return false
}

// countTree counts the elements of the attachment's page in treeWorld.
func (c *Client) countTree(t *tab, sid string, frame target.ID) (int64, error) {
	res, err := c.worldEval(t, sid, frame, fmt.Sprintf(countElements, maxTreeElements))
	if err != nil {
		return 0, err
	}
	var v struct {
		Result struct {
			Value *int64 `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := jsonv2.Unmarshal(res, &v, wire.Options); err != nil {
		return 0, err
	}
	if v.ExceptionDetails != nil || v.Result.Value == nil {
		return 0, fmt.Errorf("the count threw or returned nothing")
	}
	return *v.Result.Value, nil
}

// worldEval evaluates expr in treeWorld of the attachment's frame, where
// the page's scripts cannot change what it reads, and returns
// Runtime.evaluate's result by value, a promise's once it settles. Each call
// waits at most probeTimeout.
func (c *Client) worldEval(t *tab, sid string, frame target.ID, expr string) (jsonv2.Value, error) {
	type result struct {
		v   jsonv2.Value
		err error
	}
	call := func(method cdproto.MethodType, params any) (jsonv2.Value, error) {
		raw, err := jsonv2.Marshal(params, wire.Options)
		if err != nil {
			return nil, err
		}
		done := make(chan result, 1)
		c.tabCall(t, sid, method, raw, func(v jsonv2.Value, err error) { done <- result{v, err} })
		r := <-done
		return r.v, r.err
	}
	res, err := call(cdproto.CommandPageCreateIsolatedWorld, map[string]any{"frameId": frame, "worldName": treeWorld})
	if err != nil {
		return nil, err
	}
	var w struct {
		ExecutionContextID int64 `json:"executionContextId"`
	}
	if err := jsonv2.Unmarshal(res, &w, wire.Options); err != nil {
		return nil, err
	}
	return call(cdproto.CommandRuntimeEvaluate, map[string]any{"expression": expr, "contextId": w.ExecutionContextID, "returnByValue": true, "awaitPromise": true})
}
