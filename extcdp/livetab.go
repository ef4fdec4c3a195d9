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
	"github.com/livetab/livetab/livetabcdp"
)

// The Livetab domain (package livetabcdp) offers over CDP what only the
// extension can do, so that packages such as capture and upload reach it
// through any chromedp context (and remote clients through the endpoint).
// The relay decodes its params and encodes its results with livetabcdp's
// types, the ones callers use.

// livetabCommand answers a Livetab.* method; false when m is not one.
func (c *Client) livetabCommand(ctx context.Context, m *cdproto.Message, sid target.SessionID) bool {
	r := c.r
	switch m.Method {
	case livetabcdp.CommandGetInfo:
		h := r.b.Hello()
		res, err := r.b.Call(ctx, wire.FileAccess, 0, nil)
		var fa wire.FileAccessResult
		if err == nil {
			jsonv2.Unmarshal(res, &fa, wire.Options)
		}
		c.reply(m.ID, sid, livetabcdp.GetInfoResult{
			Version:     h.Version,
			ExtensionID: h.ExtensionID,
			UserAgent:   h.UserAgent,
			FileAccess:  fa.Allowed,
			Bridge:      bridge.Version,
		})
	case livetabcdp.CommandGetActiveTab:
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
		c.reply(m.ID, sid, livetabcdp.GetActiveTabResult{TargetID: id})
	case livetabcdp.CommandCloseTab:
		var p livetabcdp.CloseTabParams
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
	case livetabcdp.CommandGetTabs:
		if err := r.refreshTabs(ctx); err != nil {
			c.failErr(m.ID, sid, err)
			return true
		}
		r.mu.Lock()
		tabs := []livetabcdp.TabEntry{}
		for _, t := range r.tabs {
			if t.targetID != "" && c.sees(t) {
				tabs = append(tabs, livetabcdp.TabEntry{
					TargetID: t.targetID, TabID: t.id, URL: t.info.URL, Title: t.info.Title,
					Active: t.info.Active, Shared: t.info.Shared, Created: t.created || t.info.Created,
				})
			}
		}
		r.mu.Unlock()
		c.reply(m.ID, sid, livetabcdp.GetTabsResult{Tabs: tabs})
	case livetabcdp.CommandSetPolicy:
		c.setPolicy(ctx, m, sid)
	default:
		return false
	}
	return true
}

// ActiveTab returns the target id of the tab the user is looking at (the
// active tab of the newest window), for chromedp.WithTargetID. ctx is an
// allocator context on livetab — NewAllocator's, or livetab.Connect's
// over the endpoint — or any chromedp context on one. Opening a tab makes
// it the active one, so ask before opening tabs of your own.
func ActiveTab(ctx context.Context) (target.ID, error) {
	if c := chromedp.FromContext(ctx); c != nil && c.Browser == nil && c.Target == nil {
		// The allocator's own context (or one not yet run): chromedp
		// runs nothing on it, so ask through a browser context of ours,
		// which opens no tab and disconnects when done.
		bctx, cancel := chromedp.NewContext(ctx)
		defer cancel()
		ctx = bctx
	}
	if _, err := chromedp.Targets(ctx); err != nil { // connects to the browser
		return "", fmt.Errorf("extcdp: ActiveTab needs a livetab allocator context (extcdp.NewAllocator, livetab.Connect) or a chromedp context on one: %w", err)
	}
	c := chromedp.FromContext(ctx)
	res, err := cdp.Call(ctx, c.Browser, livetabcdp.GetActiveTab, cdp.Empty{})
	if err != nil {
		return "", fmt.Errorf("extcdp: finding the active tab: %w", err)
	}
	return res.TargetID, nil
}
