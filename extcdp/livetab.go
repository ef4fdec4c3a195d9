package extcdp

import (
	"context"
	"fmt"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/bridge"
	"github.com/livetab/livetab/internal/wire"
)

// The Livetab domain offers over CDP what only the extension can do, so
// that packages such as capture and upload reach it through any chromedp
// context (and remote clients through the endpoint). On a plain Chrome the
// methods answer -32601, which tells callers to fall back.
const (
	// LivetabGetInfo returns {version, extensionId, userAgent, fileAccess}.
	LivetabGetInfo = "Livetab.getInfo"
	// LivetabGetActiveTab returns {targetId} of the active tab of the
	// focused window.
	LivetabGetActiveTab = "Livetab.getActiveTab"
	// LivetabCloseTab closes {targetId} even when the user opened it: the
	// explicit request the closing rule asks for.
	LivetabCloseTab = "Livetab.closeTab"
	// LivetabGetTabs returns {tabs: [{targetId, tabId, url, title, active,
	// shared, createdByLivetab}]}: shared when the person shared the tab in
	// the extension's popup.
	LivetabGetTabs = "Livetab.getTabs"
	// LivetabSetPolicy takes {sharedOnly, domains}: the calling client's own
	// policy, until it disconnects. The relay attaches it only to shared
	// tabs, tabs livetab opened and their popups (sharedOnly), refuses its
	// navigations and new tabs outside the domain patterns and ends its
	// sessions on a tab that leaves them; the extension blocks what pages of
	// livetab's tabs open outside them. Other clients are not bound.
	LivetabSetPolicy = "Livetab.setPolicy"
)

// TabEntry is one tab in Livetab.getTabs.
type TabEntry struct {
	TargetID target.ID `json:"targetId"`
	TabID    int64     `json:"tabId"`
	URL      string    `json:"url"`
	Title    string    `json:"title"`
	Active   bool      `json:"active"`
	Shared   bool      `json:"shared"`
	Created  bool      `json:"createdByLivetab"`
}

// livetabCommand answers a Livetab.* method; false when m is not one.
func (c *Client) livetabCommand(ctx context.Context, m *cdproto.Message, sid target.SessionID) bool {
	r := c.r
	switch m.Method {
	case LivetabGetInfo:
		h := r.b.Hello()
		res, err := r.b.Call(ctx, wire.FileAccess, 0, nil)
		var fa wire.FileAccessResult
		if err == nil {
			jsonv2.Unmarshal(res, &fa, wire.Options)
		}
		c.reply(m.ID, sid, map[string]any{
			"version":     h.Version,
			"extensionId": h.ExtensionID,
			"userAgent":   h.UserAgent,
			"fileAccess":  fa.Allowed,
			"bridge":      bridge.Version,
		})
	case LivetabGetActiveTab:
		if err := r.refreshTabs(ctx); err != nil {
			c.failErr(m.ID, sid, err)
			return true
		}
		r.mu.Lock()
		// Each window has an active tab; without focus information the
		// newest of them stands for "the tab the user looks at".
		var id target.ID
		var best int64
		for _, t := range r.tabs {
			if t.info.Active && t.targetID != "" && c.sees(t) && t.id > best {
				id, best = t.targetID, t.id
			}
		}
		r.mu.Unlock()
		if id == "" {
			c.fail(m.ID, sid, -32000, "livetab: no active tab")
			return true
		}
		c.reply(m.ID, sid, map[string]target.ID{"targetId": id})
	case LivetabCloseTab:
		var p target.CloseTargetParams
		if !c.params(m, sid, &p) {
			return true
		}
		t, err := c.lookupTab(ctx, p.TargetID)
		if err != nil {
			c.failErr(m.ID, sid, err)
			return true
		}
		if _, err := r.b.Call(ctx, wire.CloseTab, 0, wire.TabParams{TabID: t.id}); err != nil {
			c.failErr(m.ID, sid, fmt.Errorf("livetab: closing tab %d: %w", t.id, err))
			return true
		}
		c.reply(m.ID, sid, nil)
	case LivetabGetTabs:
		if err := r.refreshTabs(ctx); err != nil {
			c.failErr(m.ID, sid, err)
			return true
		}
		r.mu.Lock()
		tabs := []TabEntry{}
		for _, t := range r.tabs {
			if t.targetID != "" && c.sees(t) {
				tabs = append(tabs, TabEntry{t.targetID, t.id, t.info.URL, t.info.Title, t.info.Active, t.info.Shared, t.created || t.info.Created})
			}
		}
		r.mu.Unlock()
		c.reply(m.ID, sid, map[string][]TabEntry{"tabs": tabs})
	case LivetabSetPolicy:
		c.setPolicy(ctx, m, sid)
	default:
		return false
	}
	return true
}

// ActiveTab returns the target id of the tab the user is looking at (the
// active tab of the newest window), for chromedp.WithTargetID. ctx is a
// context from NewAllocator, or any chromedp context on it.
func ActiveTab(ctx context.Context) (target.ID, error) {
	if _, err := chromedp.Targets(ctx); err != nil { // allocates the browser connection
		return "", fmt.Errorf("extcdp: %w", err)
	}
	c := chromedp.FromContext(ctx)
	if c == nil || c.Browser == nil {
		return "", fmt.Errorf("extcdp: ActiveTab needs a context from extcdp.NewAllocator: %w", chromedp.ErrInvalidContext)
	}
	res, err := cdp.Call(ctx, c.Browser, cdp.Command[cdp.Empty, struct {
		TargetID target.ID `json:"targetId"`
	}]{Method: LivetabGetActiveTab}, cdp.Empty{})
	if err != nil {
		return "", fmt.Errorf("extcdp: finding the active tab: %w", err)
	}
	return res.TargetID, nil
}
