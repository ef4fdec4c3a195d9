package extcdp

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"

	"github.com/livetab/livetab/internal/wire"
	"github.com/livetab/livetab/livetabcdp"
	"github.com/livetab/livetab/policy"
)

// clientPolicy is what one client allowed itself with Livetab.setPolicy
// (livetabcdp.SetPolicy).
// It binds that client only, and ends with its connection: a policy must
// not outlive the program that set it (one `livetab serve` has many
// clients, and a killed agent says no goodbye). The relay enforces it on
// the client's own attach, auto-attach, createTarget and Page.navigate, and
// ends the client's sessions on a tab that leaves it. The extension gets a
// copy under the client's owner id for the one thing the relay cannot
// see in time: the tabs pages open (extension/lib/popups.js).
type clientPolicy struct {
	owner      string // the client's id toward the extension; "" until it set a policy
	set        bool
	sharedOnly bool
	domains    []string
	params     wire.PolicyParams // as the extension gets it
	tabs       []int64           // the tabs it drives, as the extension last heard
	guards     bool              // it guards its tabs' loads itself (GuardsLoads)
	// scripts are the domains under which it added scripts for new
	// documents (initscript.go), "" for none.
	scripts string
	// synced is closed once the extension holds the loads of the tabs
	// last sent (nil: nothing on its way); the client's commands to the
	// extension wait for it (waitDriven).
	synced chan struct{}
}

// holdsTabs says whether the extension must know the tabs the client
// drives: to hold their loads to its domains (a client that guards them
// itself only the pages Chrome fetches ahead, aheadRules), or their every
// request off private addresses.
func (p *clientPolicy) holdsTabs() bool {
	return p.set && (len(p.domains) > 0 || p.params.BlockPrivate)
}

// setPolicy answers Livetab.setPolicy.
func (c *Client) setPolicy(ctx context.Context, m *cdproto.Message, sid target.SessionID) {
	r := c.r
	var sp livetabcdp.SetPolicyParams
	if err := jsonv2.Unmarshal(m.Params, &sp, wire.Options); err != nil {
		c.fail(m.ID, sid, -32602, livetabcdp.CommandSetPolicy+": "+err.Error())
		return
	}
	if err := policySize(sp); err != nil {
		c.failErr(m.ID, sid, err)
		return
	}
	p := wire.PolicyParams{SharedOnly: sp.SharedOnly, Domains: sp.Domains, BlockPrivate: sp.BlockPrivate, PrivateAllowed: sp.PrivateAllowed, GuardsLoads: sp.GuardsLoads}
	if p.Domains == nil {
		p.Domains = []string{}
	}
	if p.BlockPrivate {
		// The transfer channel is livetab's, on 127.0.0.1: the rules that
		// keep the client's tabs off private addresses let its frame reach
		// the relay's port (TestChannelUnderAPolicyOffPrivateAddresses).
		p.Transfer = r.transferBase()
	}
	r.mu.Lock()
	if why := c.scriptsFor(sp.Domains); why != "" {
		r.mu.Unlock()
		c.fail(m.ID, sid, -32000, livetabcdp.CommandSetPolicy+" refused: "+why)
		return
	}
	listed := map[*tab]bool{}
	for _, t := range r.tabs {
		listed[t] = c.lists(t)
	}
	if c.pol.owner == "" {
		c.pol.owner = randomID()[:16]
	}
	p.Owner = c.pol.owner
	c.pol.set = p.SharedOnly || len(p.Domains) > 0 || p.BlockPrivate
	c.pol.sharedOnly, c.pol.domains, c.pol.params, c.pol.guards = p.SharedOnly, p.Domains, p, sp.GuardsLoads
	c.notes.hold(p.Domains)
	if !c.pol.set {
		p = wire.PolicyParams{Owner: p.Owner, Domains: []string{}}
	}
	for _, t := range r.tabs {
		r.enforcePolicies(t)
		if t.targetID != "" && t.announced {
			r.relistFor(c, t, listed[t])
		}
	}
	c.pol.tabs = nil
	if c.pol.holdsTabs() {
		c.pol.tabs = r.drivenTabs(c)
		p.Tabs = c.pol.tabs
	}
	r.mu.Unlock()
	if _, err := r.b.Call(ctx, wire.SetPolicy, 0, p); err != nil {
		c.failErr(m.ID, sid, fmt.Errorf("livetab: the relay enforces the policy, but the extension did not take it (popups are not held): %w", err))
		return
	}
	c.reply(m.ID, sid, nil)
}

// maxPolicyPatterns bounds the domains (and the private hosts) of one
// client's policy, maxPatternLen each of them. The extension turns each
// into declarativeNetRequest rules that name the whole list, for every
// client at once: a policy of 3000 domains left it answering nothing for
// 20 s and more, every client's commands included
// (TestRedTeamPolicyFloodKeepsOthersRules). An agent names a few.
const (
	maxPolicyPatterns = 64
	maxPatternLen     = 253 // the longest host name
)

// policySize refuses a policy beyond the bounds.
func policySize(sp livetabcdp.SetPolicyParams) error {
	for _, l := range [][]string{sp.Domains, sp.PrivateAllowed} {
		if len(l) > maxPolicyPatterns {
			return &cdproto.Error{Code: -32602, Message: fmt.Sprintf("%s: %d domains; livetab takes at most %d: name fewer, or use a wildcard (*.example.com)", livetabcdp.CommandSetPolicy, len(l), maxPolicyPatterns)}
		}
		for _, d := range l {
			if len(d) > maxPatternLen {
				return &cdproto.Error{Code: -32602, Message: fmt.Sprintf("%s: a domain of %d bytes; a host name has at most %d", livetabcdp.CommandSetPolicy, len(d), maxPatternLen)}
			}
		}
	}
	return nil
}

// dropPolicy tells the extension that the client's policy ended with it.
func (c *Client) dropPolicy() {
	r := c.r
	r.mu.Lock()
	owner, had := c.pol.owner, c.pol.set
	c.pol.set = false
	c.notes.hold(nil)
	r.mu.Unlock()
	if owner == "" || !had {
		return
	}
	params, _ := jsonv2.Marshal(wire.PolicyParams{Owner: owner, Domains: []string{}}, wire.Options)
	r.b.GoNow(&wire.Frame{Method: wire.SetPolicy, Params: params}, func(*wire.Frame, error) {})
}

// pushPolicies gives a (re)connected extension the policies of the live
// clients: it dropped every policy with its last connection. Call with
// r.mu held.
func (r *Relay) pushPolicies() {
	for c := range r.clients {
		if !c.pol.set {
			continue
		}
		p := c.pol.params
		p.Tabs = c.pol.tabs
		params, _ := jsonv2.Marshal(p, wire.Options)
		r.b.GoNow(&wire.Frame{Method: wire.SetPolicy, Params: params}, func(*wire.Frame, error) {})
	}
}

// drivenTabs lists the tabs c alone has sessions on, itself or on a frame
// of it, and the open tabs c opened (or its pages did) whatever its
// sessions, in order. A tab another client drives too is left out: c's
// policy binds c only, and must not hold the other's loads (the relay
// still ends c's sessions there when the tab leaves c's domains).
// A tab c opened stays held while c has no session on it: chromedp
// detaches from a tab before it closes it, and the page in it went on
// running, free of c's policy, until it was gone
// (TestRedTeamHostileRequestsOfANewTab). Call with r.mu held.
func (r *Relay) drivenTabs(c *Client) []int64 {
	mine, shared := map[int64]bool{}, map[int64]bool{}
	for _, t := range r.tabs {
		if t.creator == c && !t.closed {
			mine[t.id] = true
		}
	}
	for _, s := range r.sessions {
		if s.tab == nil {
			continue
		}
		if s.client == c {
			mine[s.tab.id] = true
		} else {
			shared[s.tab.id] = true
		}
	}
	ids := make([]int64, 0, len(mine))
	for id := range mine {
		if !shared[id] {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// syncTab brings the driven tabs of every client on t, and of c, up to
// date after a session on t began or ended. Call with r.mu held.
func (r *Relay) syncTab(t *tab, c *Client) {
	done := map[*Client]bool{c: true}
	r.syncDrivenTabs(c)
	if t == nil {
		return
	}
	for _, s := range r.sessions {
		if s.tab == t && !done[s.client] {
			done[s.client] = true
			r.syncDrivenTabs(s.client)
		}
	}
}

// syncDrivenTabs tells the extension, when they changed, the tabs c drives
// under a domain list or off private addresses: the extension holds their
// page-started loads to the domains (a script's location change would
// otherwise show c the page there before the tab's new URL reaches the
// relay), and every request of theirs off private addresses. Call with
// r.mu held.
func (r *Relay) syncDrivenTabs(c *Client) {
	if !c.pol.holdsTabs() {
		return
	}
	ids := r.drivenTabs(c)
	if slices.Equal(ids, c.pol.tabs) {
		return
	}
	c.pol.tabs = ids
	p := c.pol.params
	p.Tabs = ids
	params, _ := jsonv2.Marshal(p, wire.Options)
	synced := make(chan struct{})
	c.pol.synced = synced
	if r.b.GoNow(&wire.Frame{Method: wire.SetPolicy, Params: params}, func(*wire.Frame, error) { close(synced) }) != nil {
		close(synced)
	}
}

// maxDrivenWait bounds how long a command waits for the extension to
// hold the loads of a tab its client just began to drive.
const maxDrivenWait = 5 * time.Second

// waitDriven waits until the extension holds the loads of the tabs c
// drives as the relay last told it. The extension installs the rules
// while it goes on answering commands: under load a script's location
// change, sent right after the attach, ran before them and showed the
// client a page outside its domains (TestRedTeamScriptNavigationLeavesNoWindow).
func (c *Client) waitDriven(ctx context.Context) {
	c.r.mu.Lock()
	synced := c.pol.synced
	c.r.mu.Unlock()
	if synced == nil {
		return
	}
	t := time.NewTimer(maxDrivenWait)
	defer t.Stop()
	select {
	case <-synced:
	case <-t.C:
	case <-ctx.Done():
	}
}

// refusal says why c's policy keeps it off t, or "" when it does not.
// Call with r.mu held.
func (c *Client) refusal(t *tab) string {
	if why := c.personRefusal(t); why != "" {
		return why
	}
	if !c.pol.set {
		return ""
	}
	if c.pol.sharedOnly && !c.r.mayUse(t) {
		return fmt.Sprintf("tab %d is not shared with livetab: the person can share it by clicking the livetab icon on that tab", t.id)
	}
	if !policy.MatchURL(t.info.URL, c.pol.domains) {
		return c.outside(t, t.info.URL)
	}
	return ""
}

// outside says that t is at url, outside c's domains. It names the URL
// only on c's own tab: another's URL outside the domains is what the
// policy keeps from c (a token, a mailbox), error texts included (red
// team: an attach and a session's end told the person's URL). Call with
// r.mu held.
func (c *Client) outside(t *tab, url string) string {
	if t.creator == c {
		return fmt.Sprintf("tab %d is at %s, outside the domains livetab may use (%s)", t.id, url, strings.Join(c.pol.domains, ", "))
	}
	return fmt.Sprintf("tab %d is at a page outside the domains livetab may use (%s)", t.id, strings.Join(c.pol.domains, ", "))
}

// mayUse reports whether a shared-only client may use t: the person shared
// it, livetab opened it, or a page of livetab's tabs opened it (a popup,
// or a popup of one). A window that a shared tab, or a tab of the person's
// that some client drives, opens is the person's (a compose window with
// its draft): the extension calls it a popup all the same, and the person
// shares it on its own (red team: an agent on a shared mail tab read it).
// Call with r.mu held.
func (r *Relay) mayUse(t *tab) bool {
	if t.info.Shared {
		return true
	}
	for range maxOpenerChain {
		// A tab a program kept (Livetab.keepTab) is the person's now.
		if t.created || t.info.Created && !t.kept {
			return true
		}
		if !t.info.Popup || t.info.OpenerTabID == 0 {
			return false
		}
		o := r.tabs[t.info.OpenerTabID]
		if o == nil || o == t {
			return false
		}
		t = o
	}
	return false
}

// maxOpenerChain bounds the walk from a popup to the tab that began its
// chain of openers: pages may open popups that open popups, and a cycle of
// openers must not hold the relay.
const maxOpenerChain = 64

// refuseAttach fails an attach that c's policy does not allow.
func (c *Client) refuseAttach(m *cdproto.Message, sid target.SessionID, t *tab) bool {
	c.r.mu.Lock()
	why := c.refusal(t)
	c.r.mu.Unlock()
	if why == "" {
		return false
	}
	c.fail(m.ID, sid, -32000, "livetab policy: "+why)
	return true
}

// refuseOthers fails a command on a tab c did not open (Livetab.closeTab,
// Target.activateTarget) when c's policy, or the person, keeps c off it:
// a client that may not attach to a tab must not close it or bring it to
// the front either. Its own tabs and their popups are c's to close.
func (c *Client) refuseOthers(m *cdproto.Message, sid target.SessionID, t *tab) bool {
	c.r.mu.Lock()
	own := t.creator == c
	c.r.mu.Unlock()
	if own {
		return false
	}
	return c.refuseAttach(m, sid, t)
}

// heldDomains returns the domains c's policy holds it to, or nil when it
// names none.
func (c *Client) heldDomains() []string {
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	if !c.pol.set {
		return nil
	}
	return c.pol.domains
}

// refuseURL fails a createTarget or Page.navigate to a URL outside c's
// domains. reply is the session the answer goes to.
func (c *Client) refuseURL(m *cdproto.Message, reply target.SessionID) bool {
	domains := c.heldDomains()
	if len(domains) == 0 {
		return false
	}
	var p struct {
		URL string `json:"url"`
	}
	jsonv2.Unmarshal(m.Params, &p, wire.Options)
	if policy.MatchURL(p.URL, domains) {
		return false
	}
	c.fail(m.ID, reply, -32000, fmt.Sprintf("livetab policy: %s is outside the domains livetab may use (%s)", p.URL, strings.Join(domains, ", ")))
	return true
}

// enforcePolicies ends the sessions on t of the clients whose policy no
// longer allows it (it left their domains, or the person stopped sharing
// it), and only theirs. Call with r.mu held.
func (r *Relay) enforcePolicies(t *tab) {
	r.endRefused(t, func(c *Client) string { return c.refusal(t) })
}

// endRefused ends the sessions on t, and on its frames, of the clients
// refusal gives a reason for, telling each why. Call with r.mu held.
func (r *Relay) endRefused(t *tab, refusal func(*Client) string) {
	ended := false
	end := func(s *session) {
		why := refusal(s.client)
		if why == "" {
			return
		}
		params, _ := jsonv2.Marshal(map[string]string{"reason": "policy: " + why}, wire.Options)
		s.client.deliver(&cdproto.Message{SessionID: s.id, Method: cdproto.EventInspectorDetached, Params: params})
		s.refused = why
		r.endSession(s)
		ended = true
	}
	for _, s := range append([]*session(nil), t.sessions...) {
		end(s)
	}
	for _, ch := range r.children {
		if ch.tab == t {
			for _, s := range append([]*session(nil), ch.sessions...) {
				end(s)
			}
		}
	}
	if ended {
		r.releaseIfUnused(t)
	}
}

// ownPopup reports whether a page of a tab c created opened t: such a tab
// is c's to close, as the tab it came from is (a popup the agent's page
// opened, say, that its policy refused).
func (c *Client) ownPopup(t *tab) bool {
	r := c.r
	r.mu.Lock()
	defer r.mu.Unlock()
	o := r.tabs[t.info.OpenerTabID]
	return t.info.Popup && o != nil && o.creator == c
}

// guards reports whether c's policy makes the extension hold popups.
// Call with r.mu held.
func (c *Client) guards() bool {
	return c.pol.set && (len(c.pol.domains) > 0 || c.pol.params.BlockPrivate)
}

// checkPopup tells the extension whose policies hold a popup: the
// extension holds every popup of livetab's tabs before its first request
// by every owner's rules together, not knowing whose tab opened it. This
// lets go of those whose opener no client with a policy drives, and keeps
// the others for the owners whose clients drive the opener, and their
// opener's owners: one agent's rules held another's popups, which its own
// policy allowed (TestRedTeamOthersPolicyLeavesMyPopups). Either way the
// extension loads again a first load it blocked. A popup of a popup not
// yet told stays held by all. Call with r.mu held.
func (r *Relay) checkPopup(t *tab) {
	if !t.info.Popup || t.unguarded || t.keptFor != nil || t.info.OpenerTabID == 0 {
		return
	}
	o := r.tabs[t.info.OpenerTabID]
	if o == nil || o.info.Popup && !o.unguarded && o.keptFor == nil {
		return
	}
	owners := map[string]bool{}
	for _, ow := range o.keptFor {
		owners[ow] = true
	}
	keep := func(c *Client) {
		if c != nil && c.guards() {
			owners[c.pol.owner] = true
		}
	}
	keep(o.creator)
	for _, s := range o.sessions {
		keep(s.client)
	}
	for _, ch := range r.children {
		if ch.tab == o {
			for _, s := range ch.sessions {
				keep(s.client)
			}
		}
	}
	p := wire.UnguardParams{TabID: t.id}
	if len(owners) == 0 {
		t.unguarded = true
	} else {
		t.keptFor = slices.Sorted(maps.Keys(owners))
		p.KeepFor = t.keptFor
	}
	params, _ := jsonv2.Marshal(p, wire.Options)
	r.b.GoNow(&wire.Frame{Method: wire.Unguard, Params: params}, func(*wire.Frame, error) {})
}

// refuseHistoryEntry fails a Page.navigateToHistoryEntry of c's to an
// entry outside its domains, and reports whether it did. The tab's history
// is the person's too (a tab they opened, at an allowed page now, was at
// other sites before), and a history load is held by no rule of the
// extension: it may come from the back/forward cache without a request.
func (c *Client) refuseHistoryEntry(m *cdproto.Message, t *tab, sid string) bool {
	if m.Method != cdproto.CommandPageNavigateToHistoryEntry {
		return false
	}
	domains := c.heldDomains()
	if len(domains) == 0 {
		return false
	}
	var p struct {
		EntryID int64 `json:"entryId"`
	}
	if err := jsonv2.Unmarshal(m.Params, &p, wire.Options); err != nil {
		c.fail(m.ID, m.SessionID, -32602, fmt.Sprintf("livetab: invalid %s params: %v", m.Method, err))
		return true
	}
	ctx, cancel := context.WithTimeout(c.ctx, frameCheckTimeout)
	defer cancel()
	res, err := c.r.ask(ctx, t, sid, cdproto.CommandPageGetNavigationHistory, emptyObject)
	var h struct {
		Entries []struct {
			ID  int64  `json:"id"`
			URL string `json:"url"`
		} `json:"entries"`
	}
	if err == nil {
		err = jsonv2.Unmarshal(res, &h, wire.Options)
	}
	if err != nil {
		c.failErr(m.ID, m.SessionID, fmt.Errorf("livetab policy: %s on tab %d: could not read the tab's history to check the entry, so it is not sent; retry: %w", m.Method, t.id, err))
		return true
	}
	for _, e := range h.Entries {
		if e.ID == p.EntryID {
			if policy.MatchURL(e.URL, domains) {
				return false
			}
			c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab policy: %s refused: history entry %d of tab %d is at a page outside the domains livetab may use (%s)", m.Method, p.EntryID, t.id, strings.Join(domains, ", ")))
			return true
		}
	}
	return false // Chrome answers an entry it does not have
}

// closeParams closes t, c's own tab or popup, for c: quietly when c's
// policy holds its tabs' requests, so that the page's unload runs none of
// its scripts, and past its page's "Leave site?"; a tab the person opened
// (personsPopup) neither: its question is the person's.
func (c *Client) closeParams(t *tab) wire.CloseTabParams {
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	persons := t.personsPopup()
	return wire.CloseTabParams{TabID: t.id, Quiet: c.pol.holdsTabs() && !persons, Leave: !persons}
}

// personsPopup reports whether t is a tab the person opened from a link of
// a program's tab (a Ctrl+click or a middle click: opened behind; a page's
// popups open in front): the program's to see, drive and close with it
// (inherit; a program can open such a tab itself, by its own Ctrl+click),
// but its "Leave site?" question is left to the person, and its downloads
// are the person's once the program has gone.
// Call with r.mu held.
func (t *tab) personsPopup() bool { return t.behind && t.info.OpenerTabID != 0 }
