package extcdp

import (
	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"

	"github.com/livetab/livetab/internal/wire"
	"github.com/livetab/livetab/policy"
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
// lists of targets, target events, downloads. A client with a policy
// learns nothing of the person's tabs it may not use: those the person did
// not share, for a client held to shared tabs, and those outside its
// domains (a URL carries a token, a title an inbox's first line). It may
// still name one, to attach and hear why it may not. Its own tabs it always
// lists. Call with r.mu held.
func (c *Client) lists(t *tab) bool {
	switch {
	case !c.sees(t):
		return false
	case t.creator != nil || !c.pol.set:
		return true
	case c.pol.sharedOnly && !c.r.mayUse(t):
		return false
	}
	return policy.MatchURL(t.info.URL, c.pol.domains)
}

// listers are the clients with a policy that list t (nil t: none), for
// relist after t changed. Call with r.mu held.
func (r *Relay) listers(t *tab) map[*Client]bool {
	var l map[*Client]bool
	for c := range r.clients {
		if t != nil && c.pol.set && c.lists(t) {
			if l == nil {
				l = map[*Client]bool{}
			}
			l[c] = true
		}
	}
	return l
}

// moveTo notes that t's main frame is now at url, before the extension's
// report of the tab: the sessions of the clients whose domains it left
// end, and the clients that listed it hear it is gone (or, come into
// their domains, that it is there). Call with r.mu held.
func (r *Relay) moveTo(t *tab, url string) {
	before := r.listers(t)
	t.info.URL = url
	r.enforcePolicies(t)
	r.relist(t, before)
}

// relist tells each client with a policy that t appeared or went for it
// after a change (the person shared it or stopped, it went into the
// client's domains or out), as a target that was created or destroyed:
// before are the ones that listed it. Call with r.mu held.
func (r *Relay) relist(t *tab, before map[*Client]bool) {
	for c := range r.clients {
		if c.pol.set && before[c] != c.lists(t) {
			// The sessions of a client that lost t end before it hears
			// that t is gone, as Chrome detaches before it destroys.
			r.enforcePolicies(t)
			break
		}
	}
	for c := range r.clients {
		if c.pol.set {
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
	if _, live := r.clients[o.creator]; !live {
		// A popup the page opened as its client left, reported after the
		// relay closed the client's tabs: it closes too, or it ran on
		// unheld once the client's policy ended, and reached a private
		// address 37 times in 4 s (TestRedTeamPopupAsTheAgentLeaves).
		r.buryCreated(o.creator)
		r.closeCreated(o.creator)
	}
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
