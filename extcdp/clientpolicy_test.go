package extcdp_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/coder/websocket"

	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/internal/wire"
)

// rawClient is a CDP client of the relay's endpoint that speaks the
// protocol by hand, so that a test can drop its socket without a goodbye.
type rawClient struct {
	t    *testing.T
	ws   *websocket.Conn
	mu   sync.Mutex
	next int64
	wait map[int64]chan rawReply
	evs  chan rawEvent
}

type rawReply struct {
	Result jsonv2.Value
	Err    string
}

type rawEvent struct {
	Method    string       `json:"method"`
	SessionID string       `json:"sessionId"`
	Params    jsonv2.Value `json:"params"`
}

func dialRaw(t *testing.T, srv *httptest.Server, tok string) *rawClient {
	t.Helper()
	u := extcdp.RelayFor(env.Bridge).BrowserURL(strings.TrimPrefix(srv.URL, "http://"), tok)
	ws, _, err := websocket.Dial(context.Background(), u, nil)
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(64 << 20)
	c := &rawClient{t: t, ws: ws, wait: map[int64]chan rawReply{}, evs: make(chan rawEvent, 1024)}
	go c.read()
	t.Cleanup(func() { ws.CloseNow() })
	return c
}

func (c *rawClient) read() {
	for {
		_, b, err := c.ws.Read(context.Background())
		if err != nil {
			return
		}
		var m struct {
			ID     int64        `json:"id"`
			Result jsonv2.Value `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
			rawEvent
		}
		if jsonv2.Unmarshal(b, &m, wire.Options) != nil {
			continue
		}
		if m.ID == 0 {
			select {
			case c.evs <- m.rawEvent:
			default:
			}
			continue
		}
		c.mu.Lock()
		ch := c.wait[m.ID]
		delete(c.wait, m.ID)
		c.mu.Unlock()
		r := rawReply{Result: m.Result}
		if m.Error != nil {
			r.Err = m.Error.Message
		}
		if ch != nil {
			ch <- r
		}
	}
}

// call sends a command and waits for its answer.
func (c *rawClient) call(session, method string, params any) (jsonv2.Value, error) {
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan rawReply, 1)
	c.wait[id] = ch
	c.mu.Unlock()
	msg := map[string]any{"id": id, "method": method, "params": params}
	if session != "" {
		msg["sessionId"] = session
	}
	b, _ := jsonv2.Marshal(msg, wire.Options)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.ws.Write(ctx, websocket.MessageText, b); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		if r.Err != "" {
			return nil, fmt.Errorf("%s: %s", method, r.Err)
		}
		return r.Result, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: no answer: %w", method, ctx.Err())
	}
}

func (c *rawClient) must(session, method string, params any) jsonv2.Value {
	c.t.Helper()
	r, err := c.call(session, method, params)
	if err != nil {
		c.t.Fatal(err)
	}
	return r
}

// open creates a tab at url and attaches to it; it returns the target and
// session ids.
func (c *rawClient) open(url string) (string, string) {
	c.t.Helper()
	var ct struct {
		TargetID string `json:"targetId"`
	}
	jsonv2.Unmarshal(c.must("", "Target.createTarget", map[string]any{"url": url}), &ct, wire.Options)
	return ct.TargetID, c.attach(ct.TargetID)
}

func (c *rawClient) attach(targetID string) string {
	c.t.Helper()
	var at struct {
		SessionID string `json:"sessionId"`
	}
	jsonv2.Unmarshal(c.must("", "Target.attachToTarget", map[string]any{"targetId": targetID, "flatten": true}), &at, wire.Options)
	return at.SessionID
}

// eval runs expr in the session's page with a user gesture (which a popup
// needs), waiting for the page to be there.
func (c *rawClient) eval(session, expr string) string {
	c.t.Helper()
	var last error
	for range 100 {
		r, err := c.call(session, "Runtime.evaluate", map[string]any{"expression": expr, "userGesture": true, "returnByValue": true, "awaitPromise": true})
		if err == nil {
			var v struct {
				Result struct {
					Value any `json:"value"`
				} `json:"result"`
				Exception *struct {
					Text string `json:"text"`
				} `json:"exceptionDetails"`
			}
			jsonv2.Unmarshal(r, &v, wire.Options)
			if v.Exception == nil {
				return fmt.Sprint(v.Result.Value)
			}
			err = fmt.Errorf("%s", v.Exception.Text)
		}
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("eval %s: %v", expr, last)
	return ""
}

// navigate loads url in the session's tab.
func (c *rawClient) navigate(session, url string) error {
	r, err := c.call(session, "Page.navigate", map[string]any{"url": url})
	if err != nil {
		return err
	}
	var n struct {
		ErrorText string `json:"errorText"`
	}
	jsonv2.Unmarshal(r, &n, wire.Options)
	if n.ErrorText != "" {
		return fmt.Errorf("Page.navigate %s: %s", url, n.ErrorText)
	}
	return nil
}

// popupOf waits for a tab that opener opened and returns its target id.
func (c *rawClient) popupOf(opener string) string {
	c.t.Helper()
	for range 100 {
		var r struct {
			TargetInfos []struct {
				TargetID string `json:"targetId"`
				OpenerID string `json:"openerId"`
				URL      string `json:"url"`
			} `json:"targetInfos"`
		}
		jsonv2.Unmarshal(c.must("", "Target.getTargets", map[string]any{}), &r, wire.Options)
		for _, ti := range r.TargetInfos {
			if ti.OpenerID == opener {
				return ti.TargetID
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("no popup of %s appeared", opener)
	return ""
}

// counter is a local server that counts its requests; its address is one
// the tests' policies never allow.
type counter struct {
	*httptest.Server
	hits atomic.Int64
}

func newCounter(t *testing.T, ip string, page string) *counter {
	t.Helper()
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	c := &counter{}
	c.Server = &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/favicon.ico" {
			http.NotFound(w, r)
			return
		}
		c.hits.Add(1)
		if to := r.URL.Query().Get("to"); to != "" {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, page)
	})}}
	c.Start()
	t.Cleanup(c.Close)
	return c
}

// popupPage opens to in a new tab three ways: a link with target=_blank, a
// button that calls window.open, a form with target=_blank.
func popupPage(to string) string {
	return fmt.Sprintf(`<title>opener</title><a id=a target=_blank href="%[1]s">a</a>
<button id=b onclick="window.open('%[1]s')">b</button>
<form id=f target=_blank method=get action="%[1]s"><input type=hidden name=q value=1><button id=fb>f</button></form>`, to)
}

// Pages of a tab a client with a domain policy drives cannot reach a
// forbidden address through a new tab, however they open it, on a redirect
// of an allowed popup, or from a popup's own popup; an allowed popup opens
// and the client can drive it.
func TestPopupsStayWithinThePolicy(t *testing.T) {
	srv, tok := endpoint(t)
	forbidden := newCounter(t, "127.0.0.2", "<title>forbidden</title>secret")
	allowed := newCounter(t, "127.0.0.1", popupPage(forbidden.URL+"/from-popup"))
	opener := newCounter(t, "127.0.0.1", popupPage(forbidden.URL+"/x"))
	redirect := newCounter(t, "127.0.0.1", popupPage(allowed.URL+"/r?to="+forbidden.URL+"/redirected"))
	toAllowed := newCounter(t, "127.0.0.1", popupPage(allowed.URL+"/popup"))

	a := dialRaw(t, srv, tok)
	a.must("", extcdp.LivetabSetPolicy, map[string]any{"sharedOnly": true, "domains": []string{"127.0.0.1"}})
	for _, page := range []*counter{opener, redirect} {
		tid, sid := a.open(page.URL + "/")
		a.eval(sid, `document.readyState === 'complete' || new Promise(r => onload = r)`)
		for _, el := range []string{"a", "b", "fb"} {
			a.eval(sid, `document.getElementById('`+el+`').click(), true`)
		}
		time.Sleep(1500 * time.Millisecond)
		a.must("", "Target.closeTarget", map[string]any{"targetId": tid})
	}
	if n := forbidden.hits.Load(); n != 0 {
		t.Fatalf("the forbidden server got %d requests through popups", n)
	}
	if n := allowed.hits.Load(); n < 3 {
		t.Fatalf("the allowed popup server got %d requests before redirecting, want 3", n)
	}

	// An allowed popup opens; the client attaches to it and its own popup
	// to a forbidden address is blocked too.
	allowed.hits.Store(0)
	tid, sid := a.open(toAllowed.URL + "/")
	a.eval(sid, `document.readyState === 'complete' || new Promise(r => onload = r)`)
	a.eval(sid, `document.getElementById('a').click(), true`)
	pop := a.popupOf(tid)
	psid := a.attach(pop)
	if got := a.eval(psid, `new Promise(r => { const f = () => document.getElementById('a') ? r(location.pathname) : setTimeout(f, 20); f(); })`); got != "/popup" {
		t.Fatalf("the allowed popup is at %s", got)
	}
	for _, el := range []string{"a", "b", "fb"} {
		a.eval(psid, `document.getElementById('`+el+`').click(), true`)
	}
	time.Sleep(1500 * time.Millisecond)
	if n := forbidden.hits.Load(); n != 0 {
		t.Fatalf("the forbidden server got %d requests from a popup's popups", n)
	}
	if n := allowed.hits.Load(); n != 1 {
		t.Fatalf("the allowed popup server got %d requests, want 1", n)
	}
}

// A policy binds the client that set it, and ends with its connection,
// even when it goes without a goodbye.
func TestPolicyBelongsToItsClient(t *testing.T) {
	srv, tok := endpoint(t)
	forbidden := newCounter(t, "127.0.0.2", "<title>forbidden</title>secret")
	opener := newCounter(t, "127.0.0.1", popupPage(forbidden.URL+"/x"))

	a := dialRaw(t, srv, tok)
	b := dialRaw(t, srv, tok)
	a.must("", extcdp.LivetabSetPolicy, map[string]any{"sharedOnly": true, "domains": []string{"127.0.0.1"}})
	_, asid := a.open(site.URL + "/form")
	_, bsid := b.open(site.URL + "/form")

	// A's policy holds for A.
	if err := a.navigate(asid, site.CrossURL+"/form"); err == nil || !strings.Contains(err.Error(), "outside the domains") {
		t.Fatalf("A navigated outside its domains: %v", err)
	}
	if _, err := a.call("", "Target.createTarget", map[string]any{"url": forbidden.URL + "/new"}); err == nil || !strings.Contains(err.Error(), "outside the domains") {
		t.Fatalf("A opened a tab outside its domains: %v", err)
	}
	user := userTab(t, site.URL+"/form?not-shared")
	closeUserTab(t, user)
	if _, err := a.call("", "Target.attachToTarget", map[string]any{"targetId": user, "flatten": true}); err == nil || !strings.Contains(err.Error(), "not shared") {
		t.Fatalf("A attached to a tab the person did not share: %v", err)
	}
	// B is not bound by it.
	if err := b.navigate(bsid, site.CrossURL+"/form"); err != nil {
		t.Fatalf("B is bound by A's policy: %v", err)
	}
	if got := b.eval(bsid, `location.host`); !strings.HasPrefix(got, "localhost:") {
		t.Fatalf("B's tab is at %s", got)
	}
	b.attach(user)
	// B's pages open tabs outside A's domains: the extension holds every
	// popup of livetab's tabs at first, and lets go of B's.
	_, bop := b.open(opener.URL + "/")
	b.eval(bop, `document.readyState === 'complete' || new Promise(r => onload = r)`)
	for _, el := range []string{"a", "b"} {
		before := forbidden.hits.Load()
		b.eval(bop, `document.getElementById('`+el+`').click(), true`)
		waitFor(t, "B's popup while A holds its policy", func() bool { return forbidden.hits.Load() > before })
	}
	// A's tab leaves A's domains: A's sessions end with a reason, B's stay.
	_, bsid2 := b.open(site.URL + "/form")
	shared, _ := a.open(site.URL + "/form?both")
	bShared := b.attach(shared)
	aEvents := drain(a)
	bsid3 := bShared
	b.eval(bsid3, `location.href = '`+site.CrossURL+`/form?left', true`)
	reason := waitDetached(t, a, aEvents)
	if !strings.HasPrefix(reason, "policy: ") || !strings.Contains(reason, "outside the domains") {
		t.Fatalf("A's session ended with reason %q", reason)
	}
	if got := b.eval(bsid3, `new Promise(r => { const f = () => location.host.startsWith('localhost') ? r(location.search) : setTimeout(f, 20); f(); })`); got != "?left" {
		t.Fatalf("B's session on the tab that left A's domains: %s", got)
	}
	_ = bsid2

	// A goes away without a goodbye.
	n := extcdp.RelayFor(env.Bridge).Status().Clients
	a.ws.CloseNow()
	waitFor(t, "A's connection to end", func() bool {
		return extcdp.RelayFor(env.Bridge).Status().Clients < n
	})
	c := dialRaw(t, srv, tok)
	for _, cl := range []*rawClient{b, c} {
		_, sid := cl.open(opener.URL + "/")
		if err := cl.navigate(sid, site.CrossURL+"/form?after"); err != nil {
			t.Fatalf("bound after A left: %v", err)
		}
		if err := cl.navigate(sid, opener.URL+"/"); err != nil {
			t.Fatal(err)
		}
		cl.eval(sid, `document.readyState === 'complete' || new Promise(r => onload = r)`)
		before := forbidden.hits.Load()
		cl.eval(sid, `document.getElementById('a').click(), true`)
		waitFor(t, "the popup after A left", func() bool { return forbidden.hits.Load() > before })
	}
}

func drain(c *rawClient) chan rawEvent {
	for {
		select {
		case <-c.evs:
		default:
			return c.evs
		}
	}
}

// waitDetached waits for an Inspector.detached on one of c's sessions and
// returns its reason.
func waitDetached(t *testing.T, c *rawClient, evs chan rawEvent) string {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-evs:
			if ev.Method == "Inspector.detached" {
				var p struct {
					Reason string `json:"reason"`
				}
				jsonv2.Unmarshal(ev.Params, &p, wire.Options)
				return p.Reason
			}
		case <-timeout:
			t.Fatal("no Inspector.detached")
			return ""
		}
	}
}

func waitFor(t *testing.T, what string, f func() bool) {
	t.Helper()
	for range 200 {
		if f() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("waited in vain for %s", what)
}

// With any domain allowed but private networks not, a new tab a page opens
// cannot reach a private address written as an IP literal, but for the
// hosts the policy names.
func TestPopupsKeepOffPrivateAddresses(t *testing.T) {
	srv, tok := endpoint(t)
	forbidden := newCounter(t, "127.0.0.2", "<title>forbidden</title>secret")
	named := newCounter(t, "127.0.0.1", "<title>named</title>")
	toForbidden := newCounter(t, "127.0.0.1", popupPage(forbidden.URL+"/x"))
	toNamed := newCounter(t, "127.0.0.1", popupPage(named.URL+"/ok"))

	a := dialRaw(t, srv, tok)
	a.must("", extcdp.LivetabSetPolicy, map[string]any{"sharedOnly": true, "domains": []string{}, "blockPrivate": true, "privateAllowed": []string{"127.0.0.1"}})
	for _, page := range []*counter{toForbidden, toNamed} {
		tid, sid := a.open(page.URL + "/")
		a.eval(sid, `document.readyState === 'complete' || new Promise(r => onload = r)`)
		for _, el := range []string{"a", "b", "fb"} {
			a.eval(sid, `document.getElementById('`+el+`').click(), true`)
		}
		time.Sleep(1500 * time.Millisecond)
		a.must("", "Target.closeTarget", map[string]any{"targetId": tid})
	}
	if n := forbidden.hits.Load(); n != 0 {
		t.Fatalf("the private address got %d requests through popups", n)
	}
	if n := named.hits.Load(); n != 3 {
		t.Fatalf("the named address got %d requests through popups, want 3", n)
	}
}

// The person's own tabs are not the agent's: a tab their page opens
// outside the agent's domains loads, even while the agent holds its
// policy (if the rules caught its first load, the extension makes it
// again).
func TestPersonsPopupsAreFree(t *testing.T) {
	srv, tok := endpoint(t)
	forbidden := newCounter(t, "127.0.0.2", "<title>forbidden</title>secret")
	opener := newCounter(t, "127.0.0.1", popupPage(forbidden.URL+"/x"))
	a := dialRaw(t, srv, tok)
	a.must("", extcdp.LivetabSetPolicy, map[string]any{"sharedOnly": true, "domains": []string{"127.0.0.1"}})
	a.open(site.URL + "/form")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u, err := env.User(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	id := userTab(t, opener.URL+"/")
	closeUserTab(t, id)
	res, err := u.Call(ctx, "Target.attachToTarget", map[string]any{"targetId": id, "flatten": true})
	if err != nil {
		t.Fatal(err)
	}
	var at struct {
		SessionID string `json:"sessionId"`
	}
	jsonv2.Unmarshal(res, &at, wire.Options)
	for _, el := range []string{"a", "b"} {
		before := forbidden.hits.Load()
		expr := `new Promise(r => { const f = () => document.getElementById('` + el + `') ? r(document.getElementById('` + el + `').click()) : setTimeout(f, 20); f(); })`
		for i := 0; ; i++ {
			_, err := u.CallSession(ctx, at.SessionID, "Runtime.evaluate", map[string]any{"expression": expr, "userGesture": true, "awaitPromise": true})
			if err == nil {
				break
			}
			if i == 50 {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond) // the first page is still committing
		}
		waitFor(t, "the person's popup", func() bool { return forbidden.hits.Load() > before })
	}
}
