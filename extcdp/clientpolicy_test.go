package extcdp_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/testsite"
	"github.com/livetab/livetab/internal/wire"
	"github.com/livetab/livetab/livetabcdp"
)

// clickPopupLinks opens url (a popupPage), clicks its three popup links
// (a, b and a form, fb), gives the popups time to load, and closes the tab.
func (c *rawClient) clickPopupLinks(url string) {
	c.t.Helper()
	tid, sid := c.open(url)
	c.eval(sid, `document.readyState === 'complete' || new Promise(r => onload = r)`)
	for _, el := range []string{"a", "b", "fb"} {
		c.eval(sid, `document.getElementById('`+el+`').click(), true`)
	}
	time.Sleep(1500 * time.Millisecond)
	c.must("", "Target.closeTarget", map[string]any{"targetId": tid})
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
	// At most a minute in all: each call waits up to c.bound, and a tab that
	// never answers held one test for 33 minutes, past go test's timeout.
	for end := time.Now().Add(time.Minute); time.Now().Before(end); {
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
	forbidden := testsite.NewCounter(t, "127.0.0.2", "<title>forbidden</title>secret")
	allowed := testsite.NewCounter(t, "127.0.0.1", popupPage(forbidden.URL+"/from-popup"))
	opener := testsite.NewCounter(t, "127.0.0.1", popupPage(forbidden.URL+"/x"))
	redirect := testsite.NewCounter(t, "127.0.0.1", popupPage(allowed.URL+"/r?to="+forbidden.URL+"/redirected"))
	toAllowed := testsite.NewCounter(t, "127.0.0.1", popupPage(allowed.URL+"/popup"))

	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"sharedOnly": true, "domains": []string{"127.0.0.1"}})
	for _, page := range []*testsite.Counter{opener, redirect} {
		a.clickPopupLinks(page.URL + "/")
	}
	if n := forbidden.Hits.Load(); n != 0 {
		t.Fatalf("the forbidden server got %d requests through popups", n)
	}
	if n := allowed.Hits.Load(); n < 3 {
		t.Fatalf("the allowed popup server got %d requests before redirecting, want 3", n)
	}

	// An allowed popup opens; the client attaches to it and its own popup
	// to a forbidden address is blocked too.
	allowed.Hits.Store(0)
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
	if n := forbidden.Hits.Load(); n != 0 {
		t.Fatalf("the forbidden server got %d requests from a popup's popups", n)
	}
	if n := allowed.Hits.Load(); n != 1 {
		t.Fatalf("the allowed popup server got %d requests, want 1", n)
	}
}

// A policy binds the client that set it, and ends with its connection,
// even when it goes without a goodbye.
func TestPolicyBelongsToItsClient(t *testing.T) {
	srv, tok := endpoint(t)
	forbidden := testsite.NewCounter(t, "127.0.0.2", "<title>forbidden</title>secret")
	opener := testsite.NewCounter(t, "127.0.0.1", popupPage(forbidden.URL+"/x"))

	a := dialRawTo(t, srv, tok)
	b := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"sharedOnly": true, "domains": []string{"127.0.0.1"}})
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
		before := forbidden.Hits.Load()
		b.eval(bop, `document.getElementById('`+el+`').click(), true`)
		waitFor(t, "B's popup while A holds its policy", func() bool { return forbidden.Hits.Load() > before })
	}
	// A's tab leaves A's domains: A's sessions end with a reason, B's stay.
	// (A tab both may use is one of the person's, shared with livetab: a
	// tab A opened would not exist for B.)
	_, bsid2 := b.open(site.URL + "/form")
	shared := userTab(t, site.URL+"/form?both")
	closeUserTab(t, shared)
	shareTab(t, shared)
	// Opened while one of livetab's tabs was active, the new tab is held
	// by the popup rules for a moment, until the extension knows no page
	// opened it (MAYBE_MS in background.js).
	time.Sleep(1200 * time.Millisecond)
	a.attach(shared)
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
	n := env.Relay.Status().Clients
	a.ws.CloseNow()
	waitFor(t, "A's connection to end", func() bool {
		return env.Relay.Status().Clients < n
	})
	c := dialRawTo(t, srv, tok)
	for _, cl := range []*rawClient{b, c} {
		_, sid := cl.open(opener.URL + "/")
		if err := cl.navigate(sid, site.CrossURL+"/form?after"); err != nil {
			t.Fatalf("bound after A left: %v", err)
		}
		if err := cl.navigate(sid, opener.URL+"/"); err != nil {
			t.Fatal(err)
		}
		cl.eval(sid, `document.readyState === 'complete' || new Promise(r => onload = r)`)
		before := forbidden.Hits.Load()
		cl.eval(sid, `document.getElementById('a').click(), true`)
		waitFor(t, "the popup after A left", func() bool { return forbidden.Hits.Load() > before })
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
	forbidden := testsite.NewCounter(t, "127.0.0.2", "<title>forbidden</title>secret")
	named := testsite.NewCounter(t, "127.0.0.1", "<title>named</title>")
	toForbidden := testsite.NewCounter(t, "127.0.0.1", popupPage(forbidden.URL+"/x"))
	toNamed := testsite.NewCounter(t, "127.0.0.1", popupPage(named.URL+"/ok"))

	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"sharedOnly": true, "domains": []string{}, "blockPrivate": true, "privateAllowed": []string{"127.0.0.1"}})
	for _, page := range []*testsite.Counter{toForbidden, toNamed} {
		a.clickPopupLinks(page.URL + "/")
	}
	if n := forbidden.Hits.Load(); n != 0 {
		t.Fatalf("the private address got %d requests through popups", n)
	}
	if n := named.Hits.Load(); n != 3 {
		t.Fatalf("the named address got %d requests through popups, want 3", n)
	}
}

// The person's own tabs are not the agent's: a tab their page opens
// outside the agent's domains loads, even while the agent holds its
// policy (if the rules caught its first load, the extension makes it
// again).
func TestPersonsPopupsAreFree(t *testing.T) {
	srv, tok := endpoint(t)
	forbidden := testsite.NewCounter(t, "127.0.0.2", "<title>forbidden</title>secret")
	opener := testsite.NewCounter(t, "127.0.0.1", popupPage(forbidden.URL+"/x"))
	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"sharedOnly": true, "domains": []string{"127.0.0.1"}})
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
		before := forbidden.Hits.Load()
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
		waitFor(t, "the person's popup", func() bool { return forbidden.Hits.Load() > before })
	}
}

// shareTab shares a tab of the person's with livetab, as the person does in
// the extension's popup.
func shareTab(t *testing.T, targetID string) {
	t.Helper()
	var tabID int64
	for deadline := time.Now().Add(5 * time.Second); tabID == 0 && time.Now().Before(deadline); {
		dialRaw(t).must("", "Target.getTargets", nil) // the relay lists the tabs again
		for _, ts := range env.Relay.Status().Tabs {
			if ts.TargetID == targetID {
				tabID = ts.TabID
			}
		}
	}
	if tabID == 0 {
		t.Fatalf("the relay does not know the person's tab %s", targetID)
	}
	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	if err := u.ShareTab(context.Background(), tabID, true); err != nil {
		t.Fatal(err)
	}
	c := dialRaw(t)
	waitFor(t, "the relay to see the tab shared", func() bool {
		var r struct {
			Tabs []livetabcdp.TabEntry `json:"tabs"`
		}
		unmarshal(c.must("", livetabcdp.CommandGetTabs, nil), &r)
		for _, e := range r.Tabs {
			if string(e.TargetID) == targetID && e.Shared {
				return true
			}
		}
		return false
	})
}

// data: URLs load (as about:blank with the document written in, see
// dataurl.go), but not for a client with a domain list: a data: document is
// outside every domain, and its scripts could reach any site, so it is
// refused as any other URL outside them, however it is spelled.
func TestDataURLKeepsTheDomainPolicy(t *testing.T) {
	srv, tok := endpoint(t)
	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}})
	_, asid := a.open(site.URL + "/form")
	for _, u := range []string{"data:text/html,<h1>x</h1>", " DATA:text/html;base64,PGgxPng8L2gxPg==", "data:,x", "data:image/png;base64,AAAA"} {
		if err := a.navigate(asid, u); err == nil || !strings.Contains(err.Error(), "outside the domains") {
			t.Fatalf("a client held to 127.0.0.1 navigated to %q: %v", u, err)
		}
		if _, err := a.call("", "Target.createTarget", map[string]any{"url": u}); err == nil || !strings.Contains(err.Error(), "outside the domains") {
			t.Fatalf("a client held to 127.0.0.1 opened %q: %v", u, err)
		}
	}
	if got := a.eval(asid, `location.pathname`); got != "/form" {
		t.Fatalf("the tab is at %s", got)
	}
	b := dialRawTo(t, srv, tok)
	_, bsid := b.open(site.URL + "/form")
	if err := b.navigate(bsid, "data:text/html,<h1 id=x>free</h1>"); err != nil {
		t.Fatalf("a client with no policy: %v", err)
	}
	if got := b.eval(bsid, `document.getElementById('x').textContent`); got != "free" {
		t.Fatalf("the data: document says %q", got)
	}
}
