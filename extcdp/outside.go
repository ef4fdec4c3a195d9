package extcdp

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
)

// An allowed page loads from other sites: images, scripts, frames, and the
// documents its redirects lead to. The page cannot read those answers, nor
// the person's cookies that go with them, but a client reading the page's
// requests could: Network.*ExtraInfo events listed the person's login
// cookie of another site with its value, Fetch.requestPaused carried it in
// the Cookie header, and Fetch.getResponseBody read the document of a
// frame of another site, or of the site the client's own navigation
// redirected to (TestRedTeamCookiesInTheEventsOfARequestOutside,
// TestRedTeamFrameDocumentBodyThroughTheParent,
// TestRedTeamFetchReadsARedirectOutside). For a client held to domains,
// the relay notes which of the requests it hears of go outside them: their
// events reach it without cookies and raw headers, and their bodies are
// neither read nor replaced. A request it did not hear of is not read
// either: request ids are easy to guess.

// maxNotedRequests bounds the requests noted per client.
const maxNotedRequests = 8192

// requestNotes are the requests a client held to domains heard of, by id:
// true for those outside its domains.
type requestNotes struct {
	domains atomic.Pointer[[]string] // nil: not held to domains

	mu      sync.Mutex
	outside map[string]bool
	docs    map[string]bool // paused requests for a document (Fetch's resourceType)
	order   []string
}

// hold sets the domains the notes are kept for (none: not held).
// What was noted under other domains is forgotten: an id inside wider
// domains may be outside narrower ones.
func (n *requestNotes) hold(domains []string) {
	if old := n.domains.Load(); old != nil && slices.Equal(*old, domains) {
		return // the same again (a client that sets its policy anew)
	}
	n.mu.Lock()
	n.outside, n.docs, n.order = nil, nil, nil
	n.mu.Unlock()
	if len(domains) == 0 {
		n.domains.Store(nil)
		return
	}
	d := append([]string(nil), domains...)
	n.domains.Store(&d)
}

func (n *requestNotes) note(id string, outside bool) {
	if id == "" {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.outside == nil {
		n.outside = map[string]bool{}
	}
	if was, ok := n.outside[id]; ok {
		n.outside[id] = was || outside
		return
	}
	if len(n.order) >= maxNotedRequests {
		// A forgotten id is one the client was not told of: its reads
		// are refused.
		delete(n.outside, n.order[0])
		delete(n.docs, n.order[0])
		n.order = n.order[1:]
	}
	n.outside[id] = outside
	n.order = append(n.order, id)
}

// noteDocument notes that the paused request id is for a document.
func (n *requestNotes) noteDocument(id string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.docs == nil {
		n.docs = map[string]bool{}
	}
	n.docs[id] = true
}

func (n *requestNotes) document(id string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.docs[id]
}

// lookup says whether id is noted, and whether it goes outside.
func (n *requestNotes) lookup(id string) (outside, known bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	outside, known = n.outside[id]
	return outside, known
}

// scrubOutside returns m as a client held to domains may hear it: the
// events of a request outside them without cookies and raw headers. Other
// messages pass as they are.
func (c *Client) scrubOutside(m *cdproto.Message) *cdproto.Message {
	switch m.Method {
	case cdproto.EventCSSStyleSheetAdded, cdproto.EventDebuggerScriptParsed:
		c.noteSource(m)
		return m
	case cdproto.EventNetworkRequestWillBeSent, cdproto.EventNetworkRequestWillBeSentExtraInfo,
		cdproto.EventNetworkResponseReceived, cdproto.EventNetworkResponseReceivedExtraInfo,
		cdproto.EventFetchRequestPaused, cdproto.EventFetchAuthRequired, cdproto.EventNetworkWebSocketCreated,
		cdproto.EventNetworkWebSocketWillSendHandshakeRequest, cdproto.EventNetworkWebSocketHandshakeResponseReceived:
	default:
		return m
	}
	dp := c.notes.domains.Load()
	if dp == nil {
		return m
	}
	domains := *dp
	var p map[string]jsonv2.Value
	if jsonv2.Unmarshal(m.Params, &p, wire.Options) != nil {
		return m
	}
	var id string
	jsonv2.Unmarshal(p["requestId"], &id, wire.Options)
	urlOf := func(field string) string {
		var r struct {
			URL string `json:"url"`
		}
		jsonv2.Unmarshal(p[field], &r, wire.Options)
		return r.URL
	}
	switch m.Method {
	case cdproto.EventNetworkRequestWillBeSent, cdproto.EventFetchRequestPaused, cdproto.EventFetchAuthRequired:
		c.notes.note(id, !frameAllowed(urlOf("request"), domains))
		var kind string
		jsonv2.Unmarshal(p["resourceType"], &kind, wire.Options)
		if m.Method != cdproto.EventNetworkRequestWillBeSent && (kind == "Document" || kind == "" || strings.HasSuffix(kind, "Worker")) {
			c.notes.noteDocument(id)
		}
	case cdproto.EventNetworkWebSocketCreated:
		var u string
		jsonv2.Unmarshal(p["url"], &u, wire.Options)
		if rest, ok := strings.CutPrefix(u, "ws"); ok {
			u = "http" + rest // ws: and wss: are http: and https: to the domains
		}
		c.notes.note(id, !frameAllowed(u, domains))
	}
	outside, known := c.notes.lookup(id)
	if known && !outside {
		return m // the domains' own: its cookies too
	}
	if !known && m.Method == cdproto.EventNetworkRequestWillBeSentExtraInfo {
		// Not placed yet (its requestWillBeSent may come after): the
		// cookies Chrome names are those of the request's URL, sent or
		// not, so one of a domain outside tells it goes outside. One of
		// a parent domain of an allowed host counts as outside here.
		if _, dropped := allowedCookies(p["associatedCookies"], domains); !dropped {
			p["headers"] = dropHeaders(p["headers"], map[string]bool{"authorization": true, "proxy-authorization": true})
			return withParams(m, p)
		}
	}
	// Outside, or not known to be inside: no cookies, no raw headers.
	for _, f := range []string{"headers", "responseHeaders", "request", "response", "redirectResponse"} {
		if v, ok := p[f]; ok {
			p[f] = scrubHeaders(v)
		}
	}
	for _, f := range []string{"headersText", "blockedCookies", "exemptedCookies", "associatedCookies"} {
		delete(p, f)
	}
	return withParams(m, p)
}

func withParams(m *cdproto.Message, p map[string]jsonv2.Value) *cdproto.Message {
	b, err := jsonv2.Marshal(p, wire.Options)
	if err != nil {
		return m
	}
	n := *m
	n.Params = b
	return &n
}

// allowedCookies keeps, of Network's associatedCookies, those of a domain
// within domains, and says whether it dropped any.
func allowedCookies(v jsonv2.Value, domains []string) (jsonv2.Value, bool) {
	var list []map[string]jsonv2.Value
	if len(v) == 0 || jsonv2.Unmarshal(v, &list, wire.Options) != nil {
		return v, false
	}
	kept := list[:0:0]
	for _, e := range list {
		var ck struct {
			Domain string `json:"domain"`
		}
		jsonv2.Unmarshal(e["cookie"], &ck, wire.Options)
		if ck.Domain != "" && frameAllowed("https://"+strings.TrimPrefix(ck.Domain, ".")+"/", domains) {
			kept = append(kept, e)
		}
	}
	if len(kept) == len(list) {
		return v, false
	}
	b, err := jsonv2.Marshal(kept, wire.Options)
	if err != nil {
		return jsonv2.Value("[]"), true
	}
	return b, true
}

// credentialHeaders are the headers that carry the person's cookies and
// credentials.
var credentialHeaders = map[string]bool{"cookie": true, "set-cookie": true, "cookie2": true, "set-cookie2": true, "authorization": true, "proxy-authorization": true}

// scrubHeaders takes the cookie headers out of v: a headers object
// (name: value), a list of {name, value} (Fetch), or an object holding
// those (a request or response: headers, requestHeaders, and their texts).
func scrubHeaders(v jsonv2.Value) jsonv2.Value {
	var obj map[string]jsonv2.Value
	if jsonv2.Unmarshal(v, &obj, wire.Options) == nil {
		changed := false
		for k, x := range obj {
			switch {
			case credentialHeaders[strings.ToLower(k)]:
				delete(obj, k)
				changed = true
			case k == "headers" || k == "requestHeaders":
				obj[k] = scrubHeaders(x)
				changed = true
			case k == "headersText" || k == "requestHeadersText":
				delete(obj, k)
				changed = true
			}
		}
		if !changed {
			return v
		}
		b, err := jsonv2.Marshal(obj, wire.Options)
		if err != nil {
			return jsonv2.Value("{}")
		}
		return b
	}
	var list []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	if jsonv2.Unmarshal(v, &list, wire.Options) == nil {
		kept := list[:0:0]
		for _, h := range list {
			if !credentialHeaders[strings.ToLower(h.Name)] {
				kept = append(kept, h)
			}
		}
		b, err := jsonv2.Marshal(kept, wire.Options)
		if err != nil {
			return jsonv2.Value("[]")
		}
		return b
	}
	return v
}

// readsRequest names the commands that read or replace a request's body
// or answer by its id.
var readsRequest = map[cdproto.MethodType]bool{
	cdproto.CommandFetchGetResponseBody:               true,
	cdproto.CommandFetchTakeResponseBodyAsStream:      true,
	cdproto.CommandFetchFulfillRequest:                true,
	cdproto.CommandNetworkGetResponseBody:             true,
	cdproto.CommandNetworkGetRequestPostData:          true,
	cdproto.CommandNetworkSearchInResponseBody:        true,
	cdproto.CommandAuditsGetEncodedResponse:           true,
	cdproto.CommandNetworkStreamResourceContent:       true,
	"Network.getResponseBodyForInterception":          true,
	"Network.takeResponseBodyForInterceptionAsStream": true,
}

// refuseOutsideRequest fails, for a client held to domains, a command that
// reads or replaces the body of a request outside them, or of one it did
// not hear of; and a change to such a request on its way (Fetch's
// continue with other headers, method, body or answer).
func (c *Client) refuseOutsideRequest(m *cdproto.Message) bool {
	why := c.refuseOutsideRequestCheck(m)
	if why != "" {
		c.fail(m.ID, m.SessionID, -32000, why)
	}
	return why != ""
}

// refuseOutsideRequestCheck is why refuseOutsideRequest fails m, "" if it
// does not.
func (c *Client) refuseOutsideRequestCheck(m *cdproto.Message) string {
	changes := m.Method == cdproto.CommandFetchContinueRequest || m.Method == cdproto.CommandFetchContinueResponse
	if !readsRequest[m.Method] && !changes {
		return ""
	}
	dp := c.notes.domains.Load()
	if dp == nil {
		return ""
	}
	var p struct {
		RequestID      string         `json:"requestId"`
		InterceptionID string         `json:"interceptionId"`
		Method         string         `json:"method"`
		PostData       string         `json:"postData"`
		Headers        []jsonv2.Value `json:"headers"`
		ResponseCode   int            `json:"responseCode"`
		ResponseHdrs   []jsonv2.Value `json:"responseHeaders"`
		BinaryHdrs     string         `json:"binaryResponseHeaders"`
		ResponsePhrase string         `json:"responsePhrase"`
	}
	if jsonv2.Unmarshal(m.Params, &p, wire.Options) != nil {
		return "" // Chrome answers for bad params
	}
	id := p.RequestID
	if id == "" {
		id = p.InterceptionID
	}
	outside, known := c.notes.lookup(id)
	if changes {
		if known && !outside || p.Method == "" && p.PostData == "" && p.Headers == nil && p.ResponseCode == 0 && p.ResponseHdrs == nil && p.BinaryHdrs == "" && p.ResponsePhrase == "" {
			return ""
		}
		return fmt.Sprintf("livetab policy: %s refused: request %s goes outside the domains livetab may use (%s); continue it as it is, or fail it", m.Method, id, strings.Join(*dp, ", "))
	}
	switch {
	case !known:
		return fmt.Sprintf("livetab policy: %s refused: livetab told this client of no request %s; a client held to domains reads the requests of its pages it heard of (Network.enable, Fetch.enable)", m.Method, id)
	case outside && (m.Method != cdproto.CommandFetchFulfillRequest || c.notes.document(id)):
		// A page's own script or image of another site may be answered
		// (Playwright's route.fulfill mocks): it runs or shows in the
		// allowed page. A document or a worker would run in the other
		// site's origin, with the person's cookies.
		return fmt.Sprintf("livetab policy: %s refused: request %s goes outside the domains livetab may use (%s); its page may load it, but this client may not read it, nor answer it with a document: to read it, add its site to the domains (Livetab.setPolicy)", m.Method, id, strings.Join(*dp, ", "))
	}
	return ""
}

// refuseSnapshot takes, for a client held to domains, a
// Page.captureSnapshot itself, and fails it when the MHTML holds the
// document of a frame outside the domains: Chrome writes every frame's
// document into it, those in renderers of their own too, which the
// page's own frame tree does not list (TestRedTeamFrameThroughPageCommands).
// The images and other resources of other sites stay: the page shows them.
func (c *Client) refuseSnapshot(m *cdproto.Message, t *tab, sid string) bool {
	if m.Method != cdproto.CommandPageCaptureSnapshot {
		return false
	}
	dp := c.notes.domains.Load()
	if dp == nil {
		return false
	}
	domains := *dp
	ctx, cancel := context.WithTimeout(c.ctx, clientTimeout)
	defer cancel()
	res, err := c.r.ask(ctx, t, sid, m.Method, m.Params)
	if err != nil {
		c.failErr(m.ID, m.SessionID, fmt.Errorf("%s: %w", m.Method, err))
		return true
	}
	var snap struct {
		Data string `json:"data"`
	}
	jsonv2.Unmarshal(res, &snap, wire.Options)
	if u := outsideDocument(snap.Data, domains); u != "" {
		c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab policy: %s refused: the page has a frame outside the domains livetab may use (%s), and the snapshot would hold its document: take a screenshot, capture a page without such frames, or add the frame's site to the domains (Livetab.setPolicy)", m.Method, strings.Join(domains, ", ")))
		return true
	}
	c.reply(m.ID, m.SessionID, res)
	return true
}

// outsideDocument returns the location of the first document in the
// MHTML snapshot mhtml that is outside domains (an HTML part, or a frame's
// part, which Blink names frame-…), "" when there is none. A snapshot it
// cannot read counts as outside.
func outsideDocument(mhtml string, domains []string) string {
	const unreadable = "(a snapshot livetab could not read)"
	_, after, ok := strings.Cut(mhtml, "boundary=\"")
	boundary, _, ok2 := strings.Cut(after, "\"")
	if !ok || !ok2 || boundary == "" {
		return unreadable
	}
	boundary = "--" + boundary
	parts := 0
	inHeaders, doc, loc := false, false, ""
	for line := range strings.Lines(mhtml) {
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == boundary:
			inHeaders, doc, loc = true, false, ""
			parts++
		case !inHeaders:
		case line == "":
			inHeaders = false
			if doc && (loc == "" || !frameAllowed(loc, domains)) {
				if loc == "" {
					return unreadable
				}
				return loc
			}
		default:
			name, value, _ := strings.Cut(line, ":")
			value = strings.TrimSpace(value)
			switch strings.ToLower(name) {
			case "content-type":
				v := strings.ToLower(value)
				doc = doc || strings.HasPrefix(v, "text/html") || strings.HasPrefix(v, "application/xhtml+xml")
			case "content-id":
				doc = doc || strings.HasPrefix(value, "<frame-")
			case "content-location":
				loc = value
			}
		}
	}
	if parts == 0 {
		return unreadable
	}
	return ""
}

// A page's style sheets and scripts of other sites are read by their own
// ids and URLs too, not only by their requests': Page.getResourceContent
// and searchInResource name the URL, CSS.getStyleSheetText a style sheet,
// Debugger.getScriptSource a script (TestRedTeamResourceContentOfASubresourceOutside).
// The relay notes, from CSS.styleSheetAdded and Debugger.scriptParsed,
// which ids come from outside the domains, under the same notes as the
// requests (an id of each kind is its own string: "style-sheet-…", a
// number).

// noteSource notes the style sheet or script an event tells of.
func (c *Client) noteSource(m *cdproto.Message) {
	dp := c.notes.domains.Load()
	if dp == nil {
		return
	}
	var p struct {
		Header struct {
			StyleSheetID string `json:"styleSheetId"`
			SourceURL    string `json:"sourceURL"`
		} `json:"header"`
		ScriptID string `json:"scriptId"`
		URL      string `json:"url"`
	}
	if jsonv2.Unmarshal(m.Params, &p, wire.Options) != nil {
		return
	}
	if m.Method == cdproto.EventCSSStyleSheetAdded {
		c.notes.note("css:"+p.Header.StyleSheetID, !frameAllowed(p.Header.SourceURL, *dp))
	} else {
		c.notes.note("js:"+p.ScriptID, !frameAllowed(p.URL, *dp))
	}
}

// readsSource names the commands that read a style sheet's or a script's
// text by id, with the prefix of its notes.
var readsSource = map[cdproto.MethodType]string{
	cdproto.CommandCSSGetStyleSheetText:          "css:",
	cdproto.CommandCSSCollectClassNames:          "css:",
	cdproto.CommandDebuggerGetScriptSource:       "js:",
	cdproto.CommandDebuggerSearchInContent:       "js:",
	"Debugger.getWasmBytecode":                   "js:",
	cdproto.CommandDebuggerDisassembleWasmModule: "js:",
}

// refuseOutsideSource fails, for a client held to domains, a read of a
// resource outside them by URL, or of a style sheet or script of one (or
// one it was not told of) by id.
func (c *Client) refuseOutsideSource(m *cdproto.Message) bool {
	prefix, byID := readsSource[m.Method]
	if !byID && m.Method != cdproto.CommandPageGetResourceContent && m.Method != cdproto.CommandPageSearchInResource {
		return false
	}
	dp := c.notes.domains.Load()
	if dp == nil {
		return false
	}
	var p struct {
		URL          string `json:"url"`
		StyleSheetID string `json:"styleSheetId"`
		ScriptID     string `json:"scriptId"`
	}
	if jsonv2.Unmarshal(m.Params, &p, wire.Options) != nil {
		return false
	}
	refuse := func(what string) bool {
		c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab policy: %s refused: %s; its page may load it, but a client held to the domains livetab may use (%s) does not read it: to read it, add its site to the domains (Livetab.setPolicy)", m.Method, what, strings.Join(*dp, ", ")))
		return true
	}
	if !byID {
		if !frameAllowed(p.URL, *dp) {
			return refuse(fmt.Sprintf("%.200s is outside the domains", p.URL))
		}
		return false
	}
	id := p.StyleSheetID + p.ScriptID
	switch outside, known := c.notes.lookup(prefix + id); {
	case !known:
		return refuse(fmt.Sprintf("livetab told this client of no %s %s (CSS.enable, Debugger.enable)", map[string]string{"css:": "style sheet", "js:": "script"}[prefix], id))
	case outside:
		return refuse(fmt.Sprintf("%s comes from outside the domains", id))
	}
	return false
}

// dropHeaders takes the headers named (lower case) out of a headers
// object.
func dropHeaders(v jsonv2.Value, names map[string]bool) jsonv2.Value {
	var obj map[string]jsonv2.Value
	if len(v) == 0 || jsonv2.Unmarshal(v, &obj, wire.Options) != nil {
		return v
	}
	for k := range obj {
		if names[strings.ToLower(k)] {
			delete(obj, k)
		}
	}
	b, err := jsonv2.Marshal(obj, wire.Options)
	if err != nil {
		return jsonv2.Value("{}")
	}
	return b
}
