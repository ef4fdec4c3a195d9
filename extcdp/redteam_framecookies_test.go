package extcdp_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/livetabcdp"
)

// serveAt serves h on a loopback ip.
func serveAt(t *testing.T, ip string, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	return loopbackServer(t, ip, h)
}

// TestRedTeamCookiesOfAFrameWithoutURLs: a client held to 127.0.0.1
// calls Network.getCookies with no urls on its allowed page's session.
// Chrome then reads the cookies of the page's URL and of all its frames'
// URLs: an iframe of 127.0.0.2 (the person's logged-in site, an httpOnly
// cookie) in the page hands the client that site's login.
func TestRedTeamCookiesOfAFrameWithoutURLs(t *testing.T) {
	srv, tok := endpoint(t)
	bank := serveAt(t, "127.0.0.2", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/login" {
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "zzp-bank-secret", HttpOnly: true, Path: "/", MaxAge: 3600, SameSite: http.SameSiteLaxMode})
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<title>bank</title>bank")
	})
	// The person logs in to the bank.
	id := userTab(t, bank.URL+"/login")
	closeUserTab(t, id)
	time.Sleep(500 * time.Millisecond)

	allowed := serveAt(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "own", Value: "allowed-cookie", Path: "/", MaxAge: 3600})
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<title>agent</title><iframe id=f src="%s/frame"></iframe>`, bank.URL)
	})
	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}})
	_, sid := a.open(allowed.URL + "/page")
	a.eval(sid, `document.readyState === 'complete' || new Promise(r => onload = r)`)
	time.Sleep(500 * time.Millisecond)
	for _, params := range []map[string]any{{}, {"urls": []string{}}} {
		res, err := a.call(sid, "Network.getCookies", params)
		t.Logf("Network.getCookies %v: %.300s %v", params, res, err)
		if strings.Contains(string(res), "zzp-bank-secret") {
			t.Errorf("a client held to 127.0.0.1 read the httpOnly login cookie of 127.0.0.2 through Network.getCookies %v on its page with that site's frame", params)
		}
		if len(params) == 0 && (err != nil || !strings.Contains(string(res), "allowed-cookie")) {
			t.Errorf("Network.getCookies with no urls no longer gives the page's own cookie: %s %v", res, err)
		}
	}
}

// TestRedTeamCookiesInTheEventsOfARequestOutside: a client held to
// 127.0.0.1 has its allowed page ask for an image of 127.0.0.2, where the
// person is logged in (an httpOnly, SameSite=Lax cookie, which Chrome does
// not even send cross-site). Network.requestWillBeSentExtraInfo on the
// page's own session lists the request's associatedCookies, the blocked
// ones with their values: the person's login of a site outside the
// client's domains.
func TestRedTeamCookiesInTheEventsOfARequestOutside(t *testing.T) {
	srv, tok := endpoint(t)
	bank := serveAt(t, "127.0.0.2", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/login" {
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "zzp-img-secret", HttpOnly: true, Path: "/", MaxAge: 3600, SameSite: http.SameSiteLaxMode})
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<title>bank</title>bank")
	})
	id := userTab(t, bank.URL+"/login")
	closeUserTab(t, id)
	time.Sleep(500 * time.Millisecond)
	allowed := serveAt(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<title>agent</title>agent")
	})
	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}})
	_, sid := a.open(allowed.URL + "/page")
	a.eval(sid, "1")
	a.must(sid, "Network.enable", map[string]any{})
	a.eval(sid, `new Promise(ok => { const i = new Image(); i.onload = i.onerror = () => ok(1); i.src = '`+bank.URL+`/pixel'; })`)
	time.Sleep(500 * time.Millisecond)
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, e := range a.events {
		if strings.Contains(string(e.Params), "zzp-img-secret") {
			t.Errorf("event %s on the page's session carried the person's httpOnly cookie of 127.0.0.2: %.300s", e.Method, e.Params)
		}
	}
}
