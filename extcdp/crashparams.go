package extcdp

import (
	"fmt"
	"math"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
)

// Params Chrome itself does not survive, found by sending every command of
// cdproto with edge values through livetab and through Chrome's own
// debugging port (2026-11-29, Chromium 156, 6,002 sends): each of these
// did the same on both doors, so it is Chrome's, and the relay refuses it
// before it reaches the person's browser.
//
//   - Input.imeSetComposition with a negative selection or replacement
//     bound: the browser exits.
//   - Storage.overrideQuotaForOrigin with a negative quota, or one past
//     2^63: the browser exits.
//   - DOM.setOuterHTML of node 0: the tab's renderer crashes, and a
//     renderer may be shared with the person's tabs of the same site.
//   - Page.waitForDebugger: never answered.
//
// (A pinch of scale or speed 0 is never answered either: guardGesture.)

// maxQuota bounds Storage.overrideQuotaForOrigin's quotaSize: the largest
// whole number a double keeps exact, far past any disk.
const maxQuota = 1 << 53

// guardCrashers reports whether it refused m, a command with params that
// take the browser, or the tab's renderer, down.
func (c *Client) guardCrashers(m *cdproto.Message) bool {
	refuse := func(why string) bool {
		c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab refuses %s: %s", m.Method, why))
		return true
	}
	decode := func(v any) bool {
		if len(m.Params) == 0 {
			return true
		}
		if err := jsonv2.Unmarshal(m.Params, v, wire.Options); err != nil {
			c.fail(m.ID, m.SessionID, -32602, fmt.Sprintf("livetab: invalid %s params: %v", m.Method, err))
			return false
		}
		return true
	}
	switch m.Method {
	case cdproto.CommandPageNavigate:
		var p struct {
			TransitionType string `json:"transitionType"`
		}
		if !decode(&p) {
			return true
		}
		if p.TransitionType == "auto_subframe" || p.TransitionType == "manual_subframe" {
			// TestRedTeamSubframeTransitionOfAMainFrame: the tab's
			// renderer crashed on an http URL, and about:blank dropped
			// the extension's socket.
			return refuse(fmt.Sprintf("transitionType %q is how Chrome names a frame's own loads inside a page; given to Page.navigate through the extension it crashes the tab's renderer or the extension: use \"link\" or \"typed\", or leave it out", p.TransitionType))
		}
	case cdproto.CommandPagePrintToPDF:
		var p struct {
			PaperWidth  *float64 `json:"paperWidth"`
			PaperHeight *float64 `json:"paperHeight"`
		}
		if !decode(&p) {
			return true
		}
		for _, v := range []*float64{p.PaperWidth, p.PaperHeight} {
			if v != nil && (*v < minPaperInches || *v > maxPaperInches) {
				// 1e-9 made the whole browser exit (TestRedTeamPrintToPDFExtremes).
				return refuse(fmt.Sprintf("a paper size of %g inches: give a width and height from %g to %g inches (Letter is 8.5 by 11)", *v, minPaperInches, maxPaperInches))
			}
		}
	case cdproto.CommandInputImeSetComposition:
		var p struct {
			SelectionStart   *float64 `json:"selectionStart"`
			SelectionEnd     *float64 `json:"selectionEnd"`
			ReplacementStart *float64 `json:"replacementStart"`
			ReplacementEnd   *float64 `json:"replacementEnd"`
		}
		if !decode(&p) {
			return true
		}
		for _, v := range []*float64{p.SelectionStart, p.SelectionEnd, p.ReplacementStart, p.ReplacementEnd} {
			if v != nil && (*v < 0 || *v > math.MaxInt32 || *v != math.Trunc(*v)) {
				return refuse(fmt.Sprintf("a selection or replacement bound of %g: they are positions in the text, whole numbers from 0 (a negative one makes Chrome exit)", *v))
			}
		}
		if p.SelectionStart != nil && p.SelectionEnd != nil && *p.SelectionEnd < *p.SelectionStart ||
			p.ReplacementStart != nil && p.ReplacementEnd != nil && *p.ReplacementEnd < *p.ReplacementStart {
			return refuse("a range that ends before it starts")
		}
	case "Storage.overrideQuotaForOrigin":
		var p struct {
			QuotaSize *float64 `json:"quotaSize"`
		}
		if !decode(&p) {
			return true
		}
		if q := p.QuotaSize; q != nil && (*q < 0 || *q > maxQuota || *q != math.Trunc(*q)) {
			return refuse(fmt.Sprintf("a quota of %g bytes: a whole number from 0 to 2^53 (a negative one, or one past 2^63, makes Chrome exit); leave quotaSize out to clear the override", *q))
		}
	case cdproto.CommandDOMSetOuterHTML:
		var p struct {
			NodeID float64 `json:"nodeId"`
		}
		if !decode(&p) {
			return true
		}
		if p.NodeID < 1 {
			return refuse(fmt.Sprintf("node %g: node ids start at 1 (node 0 crashes the tab's renderer, which the person's tabs of the same site may share); get one with DOM.getDocument or DOM.querySelector", p.NodeID))
		}
	case cdproto.CommandPageWaitForDebugger:
		return refuse("Chrome never answers it through livetab; a tab livetab drives runs at once")
	}
	return false
}

// The paper sizes Page.printToPDF takes, in inches: smaller than a tenth
// of an inch, Chrome either refuses the page as empty or exits.
const (
	minPaperInches = 0.1
	maxPaperInches = 1000.0
)
