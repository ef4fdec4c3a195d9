package extcdp

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
	"github.com/livetab/livetab/policy"
)

// Request interception (the Fetch domain) belongs to one client per
// attachment. Chrome has one Fetch agent per attachment, which every
// session on a shared tab reaches: another client's Fetch.enable replaced
// the patterns a client's guard holds documents with, its requestPaused
// events told the other client of every held request (which it could
// answer with a page of its own, or send elsewhere), and when the client
// that enabled it left, the interception stayed: every request of the
// person's tab then waited for an answer no one gave, for as long as
// another client stayed on it. So the first client to enable it holds it:
// only it hears the paused requests and answers them, the others are
// refused, and when it lets go of the tab, interception ends
// (docs/decisions/2026-11-23-each-client-owns-the-tabs-it-opens.md).

// fetchHolder is where the holder of an attachment's Fetch is kept: the
// tab's own (sid "") or one of its child sessions'. Call with r.mu held.
func (r *Relay) fetchHolder(t *tab, sid string) **Client {
	if sid == "" {
		return &t.fetch
	}
	if ch := r.children[sid]; ch != nil && ch.tab == t {
		return &ch.fetch
	}
	return nil
}

// fetchCommand runs a Fetch.* command of c on the attachment sid of t
// (s is c's session, nil for a child addressed by Chrome's id).
func (c *Client) fetchCommand(m *cdproto.Message, t *tab, sid string, s *session) {
	r := c.r
	replySID := m.SessionID
	if m.Method == cdproto.CommandFetchContinueRequest {
		if err := c.checkRewrite(m); err != nil {
			c.failErr(m.ID, replySID, err)
			return
		}
	}
	r.mu.Lock()
	h := r.fetchHolder(t, sid)
	var holder *Client
	if h != nil {
		holder = *h
	}
	switch {
	case holder != nil && holder != c:
		r.mu.Unlock()
		c.fail(m.ID, replySID, -32000, fmt.Sprintf("livetab: another program intercepts the requests of tab %d (Fetch.enable); %s is refused until it lets go of the tab: use a tab of your own (Target.createTarget)", t.id, m.Method))
		return
	case m.Method == cdproto.CommandFetchEnable && h != nil:
		*h = c
	case m.Method == cdproto.CommandFetchDisable:
		if holder == nil {
			r.mu.Unlock()
			c.reply(m.ID, replySID, nil)
			return
		}
		*h = nil
	}
	r.mu.Unlock()
	c.forward(m, t, sid, s)
}

// checkRewrite refuses a Fetch.continueRequest that sends a request of a
// client with a policy to another URL where its policy does not let it
// go. Chrome sends the rewritten request past the extension's rules, which
// saw only the URL first asked for: a page of an allowed site read a
// private address's answer (TestRedTeamFetchRewriteKeepsThePolicy). With
// the client's domains the relay checks the new URL itself; a name's
// address it cannot check before Chrome resolves it, so a client kept off
// private addresses may not rewrite at all.
func (c *Client) checkRewrite(m *cdproto.Message) error {
	var p struct {
		URL string `json:"url"`
	}
	if jsonv2.Unmarshal(m.Params, &p, wire.Options) != nil || p.URL == "" {
		return nil // Chrome answers for bad params; no url is no rewrite
	}
	c.r.mu.Lock()
	set, domains, offPrivate := c.pol.set, c.pol.domains, c.pol.params.BlockPrivate
	c.r.mu.Unlock()
	switch {
	case !set:
		return nil
	case offPrivate:
		return &cdproto.Error{Code: -32000, Message: "livetab refuses Fetch.continueRequest with a url to a connection kept off private addresses (Livetab.setPolicy blockPrivate): Chrome sends the rewritten request past the rules that hold this connection's requests; continue it without url, or answer it with Fetch.fulfillRequest"}
	case len(domains) > 0 && !policy.MatchURL(p.URL, domains):
		return &cdproto.Error{Code: -32000, Message: fmt.Sprintf("livetab policy: Fetch.continueRequest to %.200s, outside the domains livetab may use (%s): continue the request without url, or to a URL of those domains", p.URL, strings.Join(domains, ", "))}
	}
	return nil
}

// fetchEvent reports the events of held requests, which go to the holder
// only.
func fetchEvent(m cdproto.MethodType) bool {
	return m == cdproto.EventFetchRequestPaused || m == cdproto.EventFetchAuthRequired
}

// isFetch reports the commands fetchCommand takes.
func isFetch(m cdproto.MethodType) bool { return strings.HasPrefix(string(m), "Fetch.") }

// letGoOfFetch ends the interception c holds on t and its child
// sessions, c having no session left there (leftTab): the requests it
// holds go on, and no new one waits for it. Call with r.mu held.
func (r *Relay) letGoOfFetch(t *tab, c *Client) {
	disable := func(sid string) {
		if t.attached {
			r.sendOwed(&wire.Frame{Method: string(cdproto.CommandFetchDisable), TabID: t.id, SessionID: sid})
		}
	}
	if t.fetch == c {
		t.fetch = nil
		t.noteSetup(string(cdproto.CommandFetchDisable), nil)
		disable("")
	}
	for _, ch := range r.children {
		if ch.tab == t && ch.fetch == c {
			ch.fetch = nil
			disable(ch.sid)
		}
	}
}

// fetchTo reports whether an event of an attachment whose Fetch holder is
// holder goes to client c.
func fetchTo(method cdproto.MethodType, holder, c *Client) bool {
	return holder == nil || !fetchEvent(method) || holder == c
}

// heldRequestBound is how long a client may hold a request of a tab the
// person opened (Fetch.requestPaused, Fetch.authRequired) before the relay
// lets it go on: a client whose route handler never settled (alive,
// answering pings) held the person's requests for as long as it ran, and
// their page with them (red team, 2 of 2). Longer than the page package's
// guard takes to decide (10 s at most), so that an agent's guard is never
// overtaken; a client's late answer gets Chrome's error for a request it no
// longer holds.
var heldRequestBound atomic.Int64

func init() { heldRequestBound.Store(int64(30 * time.Second)) }

// boundHeldRequest lets a request of a tab the person opened, which a
// client's interception holds, go on once heldRequestBound has passed, if
// the client has not answered it by then. sid is the attachment: "" for
// the tab's own, or a child session's. Call with r.mu held.
func (r *Relay) boundHeldRequest(t *tab, sid string, method cdproto.MethodType, params jsonv2.Value) {
	if t.creator != nil || !fetchEvent(method) {
		return
	}
	var p struct {
		RequestID           string `json:"requestId"`
		ResponseStatusCode  int64  `json:"responseStatusCode"`
		ResponseErrorReason string `json:"responseErrorReason"`
	}
	if jsonv2.Unmarshal(params, &p, wire.Options) != nil || p.RequestID == "" {
		return
	}
	cmd, body := cdproto.CommandFetchContinueRequest, map[string]any{"requestId": p.RequestID}
	switch {
	case method == cdproto.EventFetchAuthRequired:
		// As if no one intercepted: Chrome asks the person.
		cmd, body["authChallengeResponse"] = cdproto.CommandFetchContinueWithAuth, map[string]string{"response": "Default"}
	case p.ResponseStatusCode != 0 || p.ResponseErrorReason != "":
		cmd = cdproto.CommandFetchContinueResponse
	}
	next, _ := jsonv2.Marshal(body, wire.Options)
	time.AfterFunc(time.Duration(heldRequestBound.Load()), func() {
		if r.ctx.Err() != nil {
			return
		}
		r.b.GoNow(&wire.Frame{Method: string(cmd), Params: next, TabID: t.id, SessionID: sid}, func(*wire.Frame, error) {})
	})
}
