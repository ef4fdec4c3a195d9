package extcdp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/browser"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"

	"github.com/livetab/livetab/internal/wire"
)

// Windows. chrome.debugger has no Browser domain, but chrome.windows has
// what Browser.getWindowForTarget and friends need, and Puppeteer's
// page.resize (chrome-devtools-mcp's resize_page) and Playwright's window
// tooling send them. A window is the person's to arrange: the relay moves
// or sizes only a window whose every tab the client opened (the extension
// checks that again as it acts, for a tab dragged in since). A client that
// wants its page in a person's window to be a size gets it the way
// Playwright sizes pages, Emulation.setDeviceMetricsOverride on the tab,
// which is undone when it leaves; the person's window stays as it was.

// windowInfo is the result of ext.window.
type windowInfo struct {
	WindowID      int64  `json:"windowId"`
	Left          int64  `json:"left"`
	Top           int64  `json:"top"`
	Width         int64  `json:"width"`
	Height        int64  `json:"height"`
	State         string `json:"state"`
	ContentWidth  int64  `json:"contentWidth"`
	ContentHeight int64  `json:"contentHeight"`
}

func (w windowInfo) bounds() *browser.Bounds {
	return &browser.Bounds{Left: &w.Left, Top: &w.Top, Width: w.Width, Height: w.Height, WindowState: browser.WindowState(w.State)}
}

// setWindowParams are the parameters of ext.setWindow.
type setWindowParams struct {
	TabID  int64   `json:"tabId"`
	Only   []int64 `json:"only"`
	Left   *int64  `json:"left,omitempty"`
	Top    *int64  `json:"top,omitempty"`
	Width  *int64  `json:"width,omitempty"`
	Height *int64  `json:"height,omitempty"`
	State  string  `json:"state,omitempty"`
	// ContentWidth and ContentHeight size the window around its tab's
	// page (the extension measures the frame as the window changes).
	ContentWidth  int64 `json:"contentWidth,omitempty"`
	ContentHeight int64 `json:"contentHeight,omitempty"`
}

// windowCommand answers the Browser domain's window methods, and reports
// whether m was one.
func (c *Client) windowCommand(ctx context.Context, m *cdproto.Message, sid target.SessionID) bool {
	switch m.Method {
	case cdproto.CommandBrowserGetWindowForTarget:
		var p browser.GetWindowForTargetParams
		if !c.params(m, sid, &p) {
			return true
		}
		t, err := c.windowTab(ctx, p.TargetID, sid)
		if err != nil {
			c.failErr(m.ID, sid, err)
			return true
		}
		w, err := c.windowOf(ctx, t)
		if err != nil {
			c.failErr(m.ID, sid, err)
			return true
		}
		c.reply(m.ID, sid, &browser.GetWindowForTargetResult{WindowID: browser.WindowID(w.WindowID), Bounds: w.bounds()})
	case cdproto.CommandBrowserGetWindowBounds:
		var p browser.GetWindowBoundsParams
		if !c.params(m, sid, &p) {
			return true
		}
		if _, w, ok := c.windowByID(ctx, m, sid, int64(p.WindowID)); ok {
			c.reply(m.ID, sid, &browser.GetWindowBoundsResult{Bounds: w.bounds()})
		}
	case cdproto.CommandBrowserSetWindowBounds:
		var p browser.SetWindowBoundsParams
		if !c.params(m, sid, &p) {
			return true
		}
		if p.Bounds == nil {
			c.fail(m.ID, sid, -32602, "Invalid parameters: Browser.setWindowBounds: bounds is required")
			return true
		}
		t, w, ok := c.windowByID(ctx, m, sid, int64(p.WindowID))
		if !ok {
			return true
		}
		b := p.Bounds
		if b.Left == nil && b.Top == nil && b.Width == 0 && b.Height == 0 && (b.WindowState == "" || string(b.WindowState) == w.State) {
			// Nothing would change (Puppeteer asks for "normal" before a
			// resize): an answer, whoever owns the window.
			c.reply(m.ID, sid, nil)
			return true
		}
		set := setWindowParams{TabID: t.id, State: string(b.WindowState)}
		if b.Width > 0 {
			set.Width = &b.Width
		}
		if b.Height > 0 {
			set.Height = &b.Height
		}
		set.Left, set.Top = b.Left, b.Top
		err := c.setWindow(ctx, set)
		if err == nil {
			c.reply(m.ID, sid, nil)
			return true
		}
		if s := c.sessionOf(sid); errors.Is(err, errPersonsWindow) && s != nil && s.child == nil && s.tab == t &&
			(b.Width > 0 || b.Height > 0) && (b.WindowState == "" || string(b.WindowState) == w.State) {
			// Playwright sizes the window of each page to its viewport,
			// then sets the viewport by emulation on the same session:
			// in the person's window the page gets the size the window's
			// frame would leave it, and Playwright's own override, sent
			// next on this session, has the last word.
			cw, ch := w.ContentWidth, w.ContentHeight
			if b.Width > 0 {
				cw = max(b.Width-(w.Width-w.ContentWidth), 1)
			}
			if b.Height > 0 {
				ch = max(b.Height-(w.Height-w.ContentHeight), 1)
			}
			c.sizePage(m, s, cw, ch)
			return true
		}
		c.fail(m.ID, sid, -32000, fmt.Sprintf("livetab refuses Browser.setWindowBounds on window %d: %v", p.WindowID, err))
	case cdproto.CommandBrowserSetContentsSize:
		var p browser.SetContentsSizeParams
		if !c.params(m, sid, &p) {
			return true
		}
		t, w, ok := c.windowByID(ctx, m, sid, int64(p.WindowID))
		if !ok {
			return true
		}
		err := c.setWindow(ctx, setWindowParams{TabID: t.id, ContentWidth: max(p.Width, 0), ContentHeight: max(p.Height, 0)})
		if err == nil {
			c.reply(m.ID, sid, nil)
			return true
		}
		if s := c.sessionOf(sid); errors.Is(err, errPersonsWindow) && s != nil && s.child == nil && s.tab == t {
			// The person's window: size the page instead, as Playwright
			// does, on this session (its undo runs when the client goes).
			cw, ch := p.Width, p.Height
			if cw <= 0 {
				cw = w.ContentWidth
			}
			if ch <= 0 {
				ch = w.ContentHeight
			}
			c.sizePage(m, s, cw, ch)
			return true
		}
		c.fail(m.ID, sid, -32000, fmt.Sprintf("livetab refuses Browser.setContentsSize on window %d: %v; send it on the session of your page to have the page sized instead, or size it with Emulation.setDeviceMetricsOverride", p.WindowID, err))
	default:
		return false
	}
	return true
}

// sizePage answers m by sizing the page of session s to width×height with
// Emulation.setDeviceMetricsOverride, sent as if the client had sent it
// there: the relay's checks and its undo when the client leaves apply.
func (c *Client) sizePage(m *cdproto.Message, s *session, width, height int64) {
	params, _ := jsonv2.Marshal(map[string]any{"width": width, "height": height, "deviceScaleFactor": 0, "mobile": false}, wire.Options)
	c.sessionCommand(&cdproto.Message{ID: m.ID, SessionID: s.id, Method: cdproto.CommandEmulationSetDeviceMetricsOverride, Params: params}, s)
}

// windowByID is a tab in window id that c may use and the window, or
// answers m with why there is none.
func (c *Client) windowByID(ctx context.Context, m *cdproto.Message, sid target.SessionID, id int64) (*tab, windowInfo, bool) {
	t := c.tabInWindow(id, sid)
	if t == nil {
		c.fail(m.ID, sid, -32000, fmt.Sprintf("Browser window not found (%d): it is not a window of a tab this client may use; Browser.getWindowForTarget names the window of a target", id))
		return nil, windowInfo{}, false
	}
	w, err := c.windowOf(ctx, t)
	if err != nil {
		c.failErr(m.ID, sid, err)
		return nil, windowInfo{}, false
	}
	return t, w, true
}

// windowTab is the tab a getWindowForTarget means: the named target, else
// the session's.
func (c *Client) windowTab(ctx context.Context, id target.ID, sid target.SessionID) (*tab, error) {
	if id != "" {
		return c.lookupTab(ctx, id)
	}
	if s := c.sessionOf(sid); s != nil && s.tab != nil {
		return s.tab, nil
	}
	return nil, &cdproto.Error{Code: -32602, Message: "Browser.getWindowForTarget: give a targetId, or send it on a page's session"}
}

// sessionOf is c's session sid, or nil.
func (c *Client) sessionOf(sid target.SessionID) *session {
	if sid == "" {
		return nil
	}
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	if s := c.r.sessions[sid]; s != nil && s.client == c && !s.browser {
		return s
	}
	return nil
}

// tabInWindow is a tab in window id that c may use: the session's own when
// it is there, else one c opened, else any c sees.
func (c *Client) tabInWindow(id int64, sid target.SessionID) *tab {
	if s := c.sessionOf(sid); s != nil && s.tab != nil {
		c.r.mu.Lock()
		in := s.tab.info.WindowID == id
		c.r.mu.Unlock()
		if in {
			return s.tab
		}
	}
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	var seen *tab
	for _, t := range c.r.tabs {
		if t.closed || t.info.WindowID != id || !c.sees(t) {
			continue
		}
		if t.creator == c {
			return t
		}
		if seen == nil {
			seen = t
		}
	}
	return seen
}

// windowOf asks the extension for t's window.
func (c *Client) windowOf(ctx context.Context, t *tab) (windowInfo, error) {
	var w windowInfo
	raw, err := c.r.b.Call(ctx, wire.Window, 0, wire.TabParams{TabID: t.id})
	if err != nil {
		return w, fmt.Errorf("reading the window of tab %d: %w", t.id, err)
	}
	if err := jsonv2.Unmarshal(raw, &w, wire.Options); err != nil {
		return w, fmt.Errorf("reading the window of tab %d: %w", t.id, err)
	}
	c.r.mu.Lock()
	t.info.WindowID = w.WindowID
	c.r.mu.Unlock()
	return w, nil
}

// errPersonsWindow: a window holds tabs the client did not open.
var errPersonsWindow = errors.New("the window holds the person's tabs")

// setWindow changes the window of p.TabID if every tab in it is one c
// opened.
func (c *Client) setWindow(ctx context.Context, p setWindowParams) error {
	c.r.mu.Lock()
	for _, t := range c.r.tabs {
		if t.creator == c && !t.kept && !t.closed {
			p.Only = append(p.Only, t.id)
		}
	}
	c.r.mu.Unlock()
	_, err := c.r.b.Call(ctx, wire.SetWindow, 0, p)
	if err != nil && strings.Contains(err.Error(), "not this client's") {
		return fmt.Errorf("%w: livetab changes only a window of tabs this client opened (Target.createTarget with newWindow: true makes one), never the person's; size your page with Emulation.setDeviceMetricsOverride instead", errPersonsWindow)
	}
	return err
}
