package extcdp

import (
	"context"
	"fmt"
	"time"

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
			Paused:      r.isPaused(),
		})
	case livetabcdp.CommandEnable:
		r.mu.Lock()
		c.livetabEvents = true
		r.mu.Unlock()
		c.reply(m.ID, sid, nil)
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
			if t.info.Active && t.targetID != "" && c.lists(t) && t.id > best {
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
		if c.refuseOthers(m, sid, t) {
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
			if t.targetID != "" && c.lists(t) {
				tabs = append(tabs, livetabcdp.TabEntry{
					TargetID: t.targetID, TabID: t.id, URL: t.info.URL, Title: t.info.Title,
					Active: t.info.Active, Shared: t.info.Shared, Created: t.created || t.info.Created && !t.kept,
				})
			}
		}
		r.mu.Unlock()
		c.reply(m.ID, sid, livetabcdp.GetTabsResult{Tabs: tabs})
	case livetabcdp.CommandSetPolicy:
		c.setPolicy(ctx, m, sid)
	case livetabcdp.CommandDownloadBlob:
		c.downloadBlob(ctx, m, sid)
	case livetabcdp.CommandOpenTransfer, livetabcdp.CommandWriteTransfer, livetabcdp.CommandReadTransfer, livetabcdp.CommandCloseTransfer, livetabcdp.CommandTransferFile:
		c.transferCommand(m, sid)
	case livetabcdp.CommandSetClientName:
		var p livetabcdp.SetClientNameParams
		if !c.params(m, sid, &p) {
			return true
		}
		c.SetName(p.Name)
		c.reply(m.ID, sid, nil)
	case livetabcdp.CommandNoteAction:
		var p livetabcdp.NoteActionParams
		if !c.params(m, sid, &p) {
			return true
		}
		var tabID int64
		r.mu.Lock()
		if s := r.sessions[sid]; s != nil && s.client == c && s.tab != nil {
			tabID = s.tab.id
		}
		r.mu.Unlock()
		c.note(tabID, cleanName(p.Action, "an action"), cleanName(p.Decision, ""))
		c.reply(m.ID, sid, nil)
	case livetabcdp.CommandKeepTab:
		var p livetabcdp.KeepTabParams
		if !c.params(m, sid, &p) {
			return true
		}
		r.mu.Lock()
		var t *tab
		for _, x := range r.tabs {
			if x.targetID == p.TargetID && c.sees(x) {
				t = x
			}
		}
		mine := t != nil && t.creator == c
		if mine {
			t.creator, t.created, t.kept = nil, false, true
			r.syncDrivenTabs(c) // the person's now: held only while c drives it
			// The extension keeps "created" across relays: told, a relay
			// started later takes the tab (and its popups) for the
			// person's as well. An extension from before the method
			// refuses it; this relay knows either way.
			go func(id int64) {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				r.b.Call(ctx, wire.KeepTab, 0, wire.TabParams{TabID: id}) //nolint:errcheck // best effort
			}(t.id)
		}
		r.mu.Unlock()
		switch {
		case t == nil:
			c.fail(m.ID, sid, -32000, fmt.Sprintf("no tab with targetId %q: list them with Target.getTargets", p.TargetID))
		case !mine:
			c.fail(m.ID, sid, -32000, fmt.Sprintf("tab %s was not opened by this connection: it is the person's already, and a cancel only detaches from it", p.TargetID))
		default:
			c.reply(m.ID, sid, nil)
		}
	default:
		return false
	}
	return true
}

// Keep gives the tab of ctx, which this program opened, to the person: it
// stays open when ctx is cancelled (which then only detaches) and when the
// program ends, like a tab the person opened. ctx is a chromedp context on a
// livetab allocator whose tab exists (after a first Run). On a plain Chrome
// it fails with an error for which livetabcdp.IsUnsupported is true.
func Keep(ctx context.Context) error {
	c := chromedp.FromContext(ctx)
	if c == nil || c.Browser == nil || c.Target == nil {
		return fmt.Errorf("extcdp: Keep needs the context of an open tab (run an action on it first): %w", chromedp.ErrInvalidContext)
	}
	if _, err := cdp.Call(ctx, c.Browser, livetabcdp.KeepTab, livetabcdp.KeepTabParams{TargetID: c.Target.TargetID}); err != nil {
		return fmt.Errorf("extcdp: keeping tab %s open: %w", c.Target.TargetID, err)
	}
	return nil
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
