package extcdp

import (
	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"

	"github.com/livetab/livetab/internal/wire"
)

// Who may use which tab (docs/decisions/2026-11-23-each-client-owns-the-tabs-it-opens.md).
//
// Several programs share one relay through `livetab serve`. A tab a client
// opened (Target.createTarget), and every tab such a tab opens in turn
// (popups, target=_blank), belongs to that client: other clients do not see
// it in target lists or events and cannot attach to it, close it, activate
// it or read its downloads. For them it does not exist, so they get the
// same error as for a closed tab and learn nothing of it. The person's own
// tabs belong to no client: whoever the person's policy allows may use them.

// sees reports whether c may know of t. Call with r.mu held.
func (c *Client) sees(t *tab) bool {
	return t.creator == nil || t.creator == c
}

// lists reports whether c learns of t unasked, its id, URL and title: in
// lists of targets, target events, downloads. A client held to the tabs the
// person shares learns nothing of the person's other tabs (a URL carries a
// token, a title an inbox's first line); it may still name one, to attach
// and hear that the person has not shared it. Call with r.mu held.
func (c *Client) lists(t *tab) bool {
	return c.sees(t) && (t.creator != nil || !c.sharedOnly() || c.r.mayUse(t))
}

// sharedOnly reports whether c's policy holds it to the tabs the person
// shares. Call with r.mu held.
func (c *Client) sharedOnly() bool {
	return c.pol.set && c.pol.sharedOnly
}

// listers are the shared-only clients that list t (nil t: none), for
// relist after t changed. Call with r.mu held.
func (r *Relay) listers(t *tab) map[*Client]bool {
	var l map[*Client]bool
	for c := range r.clients {
		if t != nil && c.sharedOnly() && c.lists(t) {
			if l == nil {
				l = map[*Client]bool{}
			}
			l[c] = true
		}
	}
	return l
}

// relist tells each shared-only client that t appeared or went for it
// after a change (the person shared it or stopped), as a target that was
// created or destroyed: before are the ones that listed it. Call with
// r.mu held.
func (r *Relay) relist(t *tab, before map[*Client]bool) {
	for c := range r.clients {
		if c.sharedOnly() && before[c] != c.lists(t) {
			// The sessions of a client that lost t end before it hears
			// that t is gone, as Chrome detaches before it destroys.
			r.enforcePolicies(t)
			break
		}
	}
	for c := range r.clients {
		if c.sharedOnly() {
			r.relistFor(c, t, before[c])
		}
	}
}

// relistFor tells c that t appeared or went for it, when c listed it
// before and does not now, or the other way. Call with r.mu held.
func (r *Relay) relistFor(c *Client, t *tab, before bool) {
	now := c.lists(t)
	switch {
	case before && !now:
		r.targetEvent("Target.targetDestroyed", t, func(x *Client) bool { return x == c })
	case !before && now:
		r.targetEvent("Target.targetCreated", t, func(x *Client) bool { return x == c })
		r.autoAttachFor(c, t, r.targetInfo(t))
	}
}

// inherit gives a tab that another tab's page opened the owner of that
// tab. The extension says whose a popup is in its first report; should the
// link come late, other clients' sessions on the tab end. Call with r.mu
// held.
func (r *Relay) inherit(t *tab) {
	if t.creator != nil || t.kept || t.info.OpenerTabID == 0 {
		return
	}
	o := r.tabs[t.info.OpenerTabID]
	if o == nil || o == t || o.creator == nil {
		return
	}
	t.context = o.context
	r.claim(t, o.creator)
}

// claim makes t c's. Should other clients have heard of t before (the
// extension's report of it came before the link to its owner), their
// sessions on it end and they are told it is gone: for them it no longer
// exists. Call with r.mu held.
func (r *Relay) claim(t *tab, c *Client) {
	t.creator, t.created = c, true
	for _, s := range append([]*session(nil), t.sessions...) {
		if s.client != c {
			r.endSession(s)
		}
	}
	for _, ch := range r.children {
		if ch.tab != t {
			continue
		}
		for _, s := range append([]*session(nil), ch.sessions...) {
			if s.client != c {
				r.endSession(s)
			}
		}
	}
	if !t.announced || t.targetID == "" {
		return
	}
	params, _ := jsonv2.Marshal(map[string]target.ID{"targetId": t.targetID}, wire.Options)
	for o := range r.clients {
		if o != c && o.discover {
			o.deliver(&cdproto.Message{Method: "Target.targetDestroyed", Params: params})
		}
	}
	for _, s := range r.sessions {
		if s.client != c && s.discover {
			s.client.deliver(&cdproto.Message{SessionID: s.id, Method: "Target.targetDestroyed", Params: params})
		}
	}
}
