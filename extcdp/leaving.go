package extcdp

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
	"github.com/livetab/livetab/policy"
)

// A tab leaving a client's domains. The client's session there ends
// before Chrome tells it where the tab goes
// (docs/decisions/2026-11-25-a-client-reads-nothing-outside-its-domains.md).

// navigatingTo ends, as a navigation of t's main frame starts toward url
// (or is redirected there), the sessions on t of the clients held to
// domains that url is outside, t not being theirs. Chrome tells of the
// navigation (Page.frameStartedNavigating, the document's Network events)
// before it commits, when enforcePolicies acts: an agent on the person's
// tab heard where another program, or the person, took it (red team).
// A navigation that then does not commit (a download, a 204) has ended
// the session all the same: the client attaches again. A client that
// guards the tab's loads itself (GuardsLoads, holding its Fetch) decides
// the navigation: it stays until a commit outside. Call with r.mu held.
func (r *Relay) navigatingTo(t *tab, url string) {
	r.endRefused(t, func(c *Client) string {
		if !c.pol.set || len(c.pol.domains) == 0 || t.creator == c || c.pol.guards && t.fetch == c || policy.MatchURL(url, c.pol.domains) {
			return ""
		}
		return fmt.Sprintf("tab %d is going to a page outside the domains livetab may use (%s)", t.id, strings.Join(c.pol.domains, ", "))
	})
}

// watchesLeaving reports whether a session on t is of a client that
// navigatingTo may end. Call with r.mu held.
func (r *Relay) watchesLeaving(t *tab) bool {
	for _, s := range t.sessions {
		if c := s.client; c.pol.set && len(c.pol.domains) > 0 && t.creator != c {
			return true
		}
	}
	return false
}

// eventPageFrameScheduledNavigation is deprecated in CDP, and gone from
// cdproto, but Chrome still sends it, with the URL a script sends the page
// to.
const eventPageFrameScheduledNavigation cdproto.MethodType = "Page.frameScheduledNavigation"

// mainNavURL is the URL a navigation of t's main frame is going to, from
// an event of t's own attachment that tells of it before it commits: ""
// when the event is of another frame or request, or opens a new tab. It
// notes the document's request, for redirectURL.
func mainNavURL(t *tab, method cdproto.MethodType, params jsonv2.Value) string {
	var p struct {
		FrameID     string `json:"frameId"`
		URL         string `json:"url"`
		Disposition string `json:"disposition"`
		Type        string `json:"type"`
		RequestID   string `json:"requestId"`
		Request     struct {
			URL string `json:"url"`
		} `json:"request"`
	}
	if jsonv2.Unmarshal(params, &p, wire.Options) != nil || p.FrameID != string(t.targetID) || strings.HasPrefix(strings.ToLower(p.URL), "javascript:") {
		return "" // a javascript: URL runs in the page, which stays
	}
	switch method {
	case cdproto.EventNetworkRequestWillBeSent:
		if p.Type == "Document" {
			t.navRequest = [2]string{p.RequestID, p.Request.URL}
			return p.Request.URL
		}
	case cdproto.EventPageFrameRequestedNavigation:
		if p.Disposition == "" || p.Disposition == "currentTab" {
			return p.URL
		}
	default:
		return p.URL
	}
	return ""
}

// redirectURL is where a redirect of the main frame's document request
// sends it, from the response's Network.responseReceivedExtraInfo: "" for
// another request or no redirect.
func redirectURL(t *tab, params jsonv2.Value) string {
	var p struct {
		RequestID string            `json:"requestId"`
		Headers   map[string]string `json:"headers"`
	}
	if t.navRequest[0] == "" || jsonv2.Unmarshal(params, &p, wire.Options) != nil || p.RequestID != t.navRequest[0] {
		return ""
	}
	for k, v := range p.Headers {
		if strings.EqualFold(k, "location") {
			base, err := url.Parse(t.navRequest[1])
			if err != nil {
				return v
			}
			to, err := base.Parse(v)
			if err != nil {
				return v
			}
			return to.String()
		}
	}
	return ""
}

// redactHistory blanks the URLs and titles of the entries outside domains
// in a Page.getNavigationHistory result: on the person's tab they are the
// person's pages, a token or an inbox's first line (red team: the page
// before an allowed one, read whole). The ids stay, so that a client's
// goBack finds its entry; refuseHistoryEntry refuses one outside.
func redactHistory(res jsonv2.Value, domains []string) jsonv2.Value {
	var h map[string]jsonv2.Value
	var entries []map[string]jsonv2.Value
	if jsonv2.Unmarshal(res, &h, wire.Options) != nil || jsonv2.Unmarshal(h["entries"], &entries, wire.Options) != nil {
		return jsonv2.Value(`{"currentIndex":0,"entries":[]}`)
	}
	for _, e := range entries {
		var u string
		jsonv2.Unmarshal(e["url"], &u, wire.Options)
		if !policy.MatchURL(u, domains) {
			e["url"], e["userTypedURL"], e["title"] = jsonv2.Value(`""`), jsonv2.Value(`""`), jsonv2.Value(`""`)
		}
	}
	h["entries"], _ = jsonv2.Marshal(entries, wire.Options)
	out, _ := jsonv2.Marshal(h, wire.Options)
	return out
}

// popupURL is the URL of the new tab an event of a page tells of
// (Page.windowOpen, a Page.frameRequestedNavigation that opens a tab), ""
// for other events. A client held to domains hears nothing of that tab
// when the URL is outside them, and must not hear it from its opener
// (red team: window.open and a form with target=_blank, 3 of 3).
func popupURL(method cdproto.MethodType, params jsonv2.Value) string {
	if method != cdproto.EventPageWindowOpen && method != cdproto.EventPageFrameRequestedNavigation {
		return ""
	}
	var p struct {
		URL         string `json:"url"`
		Disposition string `json:"disposition"`
	}
	if jsonv2.Unmarshal(params, &p, wire.Options) != nil {
		return ""
	}
	if method == cdproto.EventPageFrameRequestedNavigation && (p.Disposition == "" || p.Disposition == "currentTab") {
		return "" // navigatingTo's, for the main frame
	}
	return p.URL
}

// hidesPopup reports whether an event telling of a new tab at url (from
// popupURL) is kept from c, on t. Call with r.mu held.
func (c *Client) hidesPopup(t *tab, url string) bool {
	return url != "" && c.pol.set && len(c.pol.domains) > 0 && t.creator != c && !policy.MatchURL(url, c.pol.domains)
}
