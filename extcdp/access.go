package extcdp

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

// inherit gives a tab that another tab's page opened the owner of that
// tab. The extension says whose a popup is in its first report; should the
// link come late, other clients' sessions on the tab end. Call with r.mu
// held.
func (r *Relay) inherit(t *tab) {
	if t.creator != nil || t.info.OpenerTabID == 0 {
		return
	}
	o := r.tabs[t.info.OpenerTabID]
	if o == nil || o == t || o.creator == nil {
		return
	}
	t.creator, t.created, t.context = o.creator, true, o.context
	for _, s := range append([]*session(nil), t.sessions...) {
		if s.client != t.creator {
			r.endSession(s)
		}
	}
}
