package extcdp

import (
	"context"
	"fmt"
	"strings"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"

	"github.com/livetab/livetab/internal/wire"
	"github.com/livetab/livetab/policy"
)

// A context's cookies, for the client's own pages. Playwright's
// context.cookies, storageState and addCookies (Puppeteer's browser.cookies
// and setCookie) send Storage.getCookies and Storage.setCookies at the
// browser level. A context here is a group of tabs in the person's own
// profile, and Chrome would answer with every cookie of every site the
// person uses. The relay reads instead the cookies of the pages the client
// opened in that context (what Network.getCookies of each page's URL
// gives, within the client's domains), and sets cookies through one of
// those pages, as Network.setCookies on its session would, domain policy
// included; set before the context has a page (Playwright's
// newContext({storageState}) does), they are held for its first page.
// Storage.clearCookies stays refused (browserLevelRefused):
// Playwright clears all, then sets back what its filter keeps.

// ownPages lists the attached tabs c opened in the browser context ctxID
// ("" for the default one). Call without r.mu.
func (c *Client) ownPages(ctxID cdp.BrowserContextID) []*tab {
	r := c.r
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*tab
	for _, t := range r.tabs {
		if t.creator == c && !t.closed && !t.kept && t.attached && t.context == ctxID {
			out = append(out, t)
		}
	}
	return out
}

// contextCookies answers Storage.getCookies and Storage.setCookies at the
// browser level, and reports whether m was one of them.
func (c *Client) contextCookies(ctx context.Context, m *cdproto.Message, sid target.SessionID) bool {
	switch m.Method {
	case cdproto.CommandStorageGetCookies, cdproto.CommandStorageSetCookies:
	default:
		return false
	}
	var p struct {
		BrowserContextID cdp.BrowserContextID `json:"browserContextId"`
		Cookies          []jsonv2.Value       `json:"cookies"`
	}
	if !c.params(m, sid, &p) {
		return true
	}
	pages := c.ownPages(p.BrowserContextID)
	if m.Method == cdproto.CommandStorageSetCookies {
		c.setContextCookies(ctx, m, sid, p.BrowserContextID, pages, p.Cookies)
		return true
	}
	domains := c.heldDomains()
	all := []jsonv2.Value{}
	seen := map[string]bool{}
	for _, t := range pages {
		c.r.mu.Lock()
		u := t.info.URL
		c.r.mu.Unlock()
		if !strings.HasPrefix(u, "http:") && !strings.HasPrefix(u, "https:") || len(domains) > 0 && !policy.MatchURL(u, domains) {
			continue
		}
		params, _ := jsonv2.Marshal(map[string][]string{"urls": {u}}, wire.Options)
		res, err := c.tabCallWait(ctx, t, cdproto.CommandNetworkGetCookies, params)
		if err != nil {
			c.failErr(m.ID, sid, fmt.Errorf("livetab: reading the cookies of your page %s: %w", u, err))
			return true
		}
		var got struct {
			Cookies []jsonv2.Value `json:"cookies"`
		}
		if err := jsonv2.Unmarshal(res, &got, wire.Options); err != nil {
			c.failErr(m.ID, sid, fmt.Errorf("livetab: reading the cookies of your page %s: %w", u, err))
			return true
		}
		for _, ck := range got.Cookies {
			var key struct {
				Name, Domain, Path string
			}
			jsonv2.Unmarshal(ck, &key, wire.Options)
			k := key.Name + "\x00" + key.Domain + "\x00" + key.Path
			if !seen[k] {
				seen[k] = true
				all = append(all, ck)
			}
		}
	}
	c.reply(m.ID, sid, map[string][]jsonv2.Value{"cookies": all})
	return true
}

func (c *Client) setContextCookies(ctx context.Context, m *cdproto.Message, sid target.SessionID, ctxID cdp.BrowserContextID, pages []*tab, cookies []jsonv2.Value) {
	params, _ := jsonv2.Marshal(map[string][]jsonv2.Value{"cookies": cookies}, wire.Options)
	// The domain policy of Network.setCookies on a page's session, the
	// refusal answering m.
	if c.guardCookies(&cdproto.Message{ID: m.ID, SessionID: sid, Method: cdproto.CommandNetworkSetCookies, Params: params}) {
		return
	}
	if len(pages) == 0 {
		// Playwright's newContext({storageState}) sets them before any
		// page can be open: they are held for the context's first page,
		// set through it before its createTarget is answered.
		r := c.r
		r.mu.Lock()
		n := len(cookies)
		for _, held := range c.heldCookies {
			n += len(held)
		}
		if n <= maxHeldCookies {
			if c.heldCookies == nil {
				c.heldCookies = map[cdp.BrowserContextID][]jsonv2.Value{}
			}
			c.heldCookies[ctxID] = append(c.heldCookies[ctxID], cookies...)
		}
		r.mu.Unlock()
		if n > maxHeldCookies {
			c.fail(m.ID, sid, -32000, fmt.Sprintf("livetab holds at most %d cookies for contexts with no page open yet: open a page in the context first (Playwright: await context.newPage(), then addCookies)", maxHeldCookies))
			return
		}
		c.reply(m.ID, sid, nil)
		return
	}
	if _, err := c.tabCallWait(ctx, pages[0], cdproto.CommandNetworkSetCookies, params); err != nil {
		c.failErr(m.ID, sid, fmt.Errorf("livetab: setting cookies through your page: %w", err))
		return
	}
	c.reply(m.ID, sid, nil)
}

// maxHeldCookies bounds the cookies a client may have held for pages not
// yet open: a storage state holds tens, a program that never opens the
// page must not grow the relay.
const maxHeldCookies = 2000

// setHeldCookies sets, through t, the first page of its context, the
// cookies held for that context. They were checked against the client's
// policy when set; Chrome may still refuse one, which the log tells.
func (c *Client) setHeldCookies(ctx context.Context, t *tab, cookies []jsonv2.Value) {
	params, _ := jsonv2.Marshal(map[string][]jsonv2.Value{"cookies": cookies}, wire.Options)
	err := c.r.ensureAttached(ctx, t)
	if err == nil {
		_, err = c.tabCallWait(ctx, t, cdproto.CommandNetworkSetCookies, params)
	}
	if err != nil {
		c.r.log.Warn("setting the cookies held for a context through its first page", "tab", t.id, "cookies", len(cookies), "err", err)
	}
}

// tabCallWait is tabCall, waited for.
func (c *Client) tabCallWait(ctx context.Context, t *tab, method cdproto.MethodType, params jsonv2.Value) (jsonv2.Value, error) {
	type result struct {
		v   jsonv2.Value
		err error
	}
	ch := make(chan result, 1)
	c.tabCall(t, "", method, params, func(v jsonv2.Value, err error) { ch <- result{v, err} })
	select {
	case res := <-ch:
		return res.v, res.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
