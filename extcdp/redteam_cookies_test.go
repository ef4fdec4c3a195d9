package extcdp_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamCommandsThatWipeThePersonsLogins: through one tab's session a
// client asks Chrome for the cookies of the whole profile, or to clear the
// cookies and storage of the whole profile or of a site outside its
// domains: it would read every login of the person, or log the person out
// of every site. Each must leave the person's cookie of another site in
// place and unread; the profile-wide ones are refused to a client without
// a policy too.
func TestRedTeamCommandsThatWipeThePersonsLogins(t *testing.T) {
	srv, tok := endpoint(t)
	person := userTab(t, site.CrossURL+"/form?cookie")
	closeUserTab(t, person)
	p := dialRawTo(t, srv, tok)
	psid := p.attach(person)
	p.eval(psid, `document.cookie = "login=secret; max-age=3600", document.cookie`)
	p.must("", "Target.detachFromTarget", map[string]any{"sessionId": psid})

	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}})
	_, sid := a.open(site.URL + "/form?wiper")
	a.eval(sid, "1")
	cross := strings.TrimSuffix(site.CrossURL, "/")
	for _, c := range []struct {
		method string
		params map[string]any
	}{
		{"Network.getAllCookies", nil},
		{"Storage.getCookies", map[string]any{}},
		{"Network.getCookies", map[string]any{"urls": []string{cross + "/"}}},
		{"Network.clearBrowserCookies", nil},
		{"Storage.clearCookies", map[string]any{}},
		{"Storage.clearDataForOrigin", map[string]any{"origin": cross, "storageTypes": "all"}},
		{"Network.deleteCookies", map[string]any{"name": "login", "url": cross + "/"}},
		{"Network.clearBrowserCache", nil},
	} {
		res, err := a.call(sid, c.method, c.params)
		got := "answered"
		if err != nil {
			got = err.Error()
		}
		t.Logf("%s: %s %.200s", c.method, got, res)
		if strings.Contains(string(res), "secret") {
			t.Errorf("%s read the person's login of another site: %.200s", c.method, res)
		}
		psid = p.attach(person)
		cookie := p.eval(psid, "document.cookie")
		p.must("", "Target.detachFromTarget", map[string]any{"sessionId": psid})
		if !strings.Contains(cookie, "login=secret") {
			t.Errorf("%s wiped the person's login of another site (cookie now %q)", c.method, cookie)
			psid = p.attach(person)
			p.eval(psid, `document.cookie = "login=secret; max-age=3600", document.cookie`)
			p.must("", "Target.detachFromTarget", map[string]any{"sessionId": psid})
		}
	}
	// Without a policy the whole profile's stay refused.
	b := dialRawTo(t, srv, tok)
	_, bsid := b.open(site.URL + "/form?wiper-b")
	b.eval(bsid, "1")
	for _, m := range []string{"Network.getAllCookies", "Storage.getCookies", "Network.clearBrowserCookies", "Storage.clearCookies"} {
		if res, err := b.call(bsid, m, nil); err == nil || !strings.Contains(err.Error(), "livetab refuses") {
			t.Errorf("%s without a policy: %.200s %v", m, res, err)
		}
	}
}

// TestRedTeamClearBrowserCacheWipesThePersons: a client asks, through its
// own tab's session, for Network.clearBrowserCache. Chrome runs it on the
// profile: every site the person uses would load everything again (a
// cached page the person opened offline would be gone). A response the
// person's tab cached must still come from the cache, and the client
// must be told what to do instead.
func TestRedTeamClearBrowserCacheWipesThePersons(t *testing.T) {
	var loads atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/cached" {
			loads.Add(1)
			w.Header().Set("Cache-Control", "max-age=3600")
			w.Write([]byte("cached body"))
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<title>person</title>"))
	}))
	t.Cleanup(srv.Close)
	ep, tok := endpoint(t)
	person := userTab(t, srv.URL+"/page")
	closeUserTab(t, person)
	p := dialRawTo(t, ep, tok)
	psid := p.attach(person)
	fetchCached := `fetch("/cached").then(r => r.text())`
	p.eval(psid, fetchCached)
	p.eval(psid, fetchCached)
	if n := loads.Load(); n != 1 {
		t.Fatalf("the person's tab loaded /cached %d times before the attack, want 1 (from the cache the second time)", n)
	}

	a := dialRawTo(t, ep, tok)
	_, sid := a.open(site.URL + "/form?cache-wiper")
	a.eval(sid, "1")
	_, err := a.call(sid, "Network.clearBrowserCache", nil)
	p.eval(psid, fetchCached)
	if n := loads.Load(); n != 1 {
		t.Errorf("Network.clearBrowserCache (%v) wiped the person's HTTP cache: /cached loaded %d times", err, n)
	}
	if err == nil || !strings.Contains(err.Error(), "livetab refuses") || !strings.Contains(err.Error(), "Network.setCacheDisabled") {
		t.Errorf("Network.clearBrowserCache: %v, want a refusal that says to use Network.setCacheDisabled", err)
	}
}
