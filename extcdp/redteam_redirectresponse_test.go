package extcdp_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamRedirectResponseOfAHopOutside: a client held to 127.0.0.1
// hears the requests of its allowed page. The page loads a URL of
// 127.0.0.2 that redirects back to 127.0.0.1. The relay strips the
// cookie and authorization headers from the events of a request outside
// (scrubOutside: "headers", "request", "response", ...), but the
// Network.requestWillBeSent of the next hop carries the outside hop's
// response as "redirectResponse", which it leaves whole: the outside
// site's Authorization header reaches the client.
func TestRedTeamRedirectResponseOfAHopOutside(t *testing.T) {
	srv, tok := endpoint(t)
	var allowedURL string
	bank := serveAt(t, "127.0.0.2", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "issued", Value: "zzq-issued-secret", HttpOnly: true, Path: "/", MaxAge: 3600})
		w.Header().Set("Authorization", "Bearer zzq-auth-secret")
		http.Redirect(w, r, allowedURL+"/land", http.StatusFound)
	})
	allowed := serveAt(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<title>agent</title>agent`)
	})
	allowedURL = allowed.URL
	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}})
	_, sid := a.open(allowed.URL + "/page")
	a.eval(sid, "1")
	a.must(sid, "Network.enable", map[string]any{})
	a.eval(sid, fmt.Sprintf(`fetch('%s/hop', {mode: 'no-cors', credentials: 'include'}).then(() => 1, () => 0)`, bank.URL))
	a.eval(sid, fmt.Sprintf(`new Promise(r => { const i = new Image(); i.onload = i.onerror = () => r(1); i.src = '%s/hop?img' })`, bank.URL))
	time.Sleep(1500 * time.Millisecond)
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, e := range a.events {
		if e.Method == "Network.requestWillBeSent" && strings.Contains(string(e.Params), "redirectResponse") {
			n++
		}
		if strings.Contains(string(e.Params), "zzq-") {
			i := strings.Index(string(e.Params), "zzq-")
			t.Errorf("%s carries a header of the outside hop's that the relay scrubs elsewhere: ...%.200s", e.Method, string(e.Params)[max(0, i-120):])
		}
	}
	if n == 0 {
		t.Fatal("no redirect heard")
	}
}
