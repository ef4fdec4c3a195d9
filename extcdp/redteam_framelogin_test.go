package extcdp_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamLoggedInFrameThroughTheParent: the person is logged in to
// a site (localhost here: a cookie SameSite=None; Secure; HttpOnly, which
// Chrome keeps on http://localhost) that an agent's allowed page (on
// 127.0.0.1) embeds. Through the page's own session the agent held to
// 127.0.0.1 reads the person's login cookie in the frame request's
// Network.requestWillBeSentExtraInfo, and the logged-in page itself with
// Fetch.getResponseBody at the response stage.
func TestRedTeamLoggedInFrameThroughTheParent(t *testing.T) {
	srv, tok := endpoint(t)
	bank := serveAt(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/login" {
			w.Header().Add("Set-Cookie", "sid=zzp-login-cookie; Path=/; Max-Age=3600; HttpOnly; Secure; SameSite=None")
		}
		ck, _ := r.Cookie("sid")
		who := "nobody"
		if ck != nil {
			who = "account-of-" + ck.Value
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<title>bank</title>%s", who)
	})
	bankURL := strings.Replace(bank.URL, "127.0.0.1", "localhost", 1)
	id := userTab(t, bankURL+"/login")
	closeUserTab(t, id)
	time.Sleep(500 * time.Millisecond)

	allowed := serveAt(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/blank" {
			fmt.Fprint(w, "<title>blank</title>")
			return
		}
		fmt.Fprintf(w, `<title>agent</title><iframe id=f src="%s/account?%s"></iframe>`, bankURL, r.URL.RawQuery)
	})
	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}})
	_, sid := a.open(allowed.URL + "/blank")
	a.eval(sid, "1")
	a.must(sid, "Network.enable", map[string]any{})
	a.must(sid, "Page.enable", map[string]any{})
	a.must(sid, "Fetch.enable", map[string]any{"patterns": []map[string]any{{"urlPattern": "*", "requestStage": "Response"}}})
	var body string
	done := make(chan struct{})
	go func() {
		defer close(done)
		deadline := time.Now().Add(6 * time.Second)
		for time.Now().Before(deadline) {
			select {
			case e := <-a.evs:
				if e.Method != "Fetch.requestPaused" {
					continue
				}
				var p struct {
					RequestID string `json:"requestId"`
					Request   struct {
						URL string `json:"url"`
					} `json:"request"`
				}
				jsonv2.Unmarshal(e.Params, &p, wire.Options)
				if strings.HasPrefix(p.Request.URL, bankURL) {
					res, _ := a.call(e.SessionID, "Fetch.getResponseBody", map[string]any{"requestId": p.RequestID})
					var b struct {
						Body string `json:"body"`
					}
					jsonv2.Unmarshal(res, &b, wire.Options)
					dec, _ := base64.StdEncoding.DecodeString(b.Body)
					body = string(dec)
				}
				a.call(e.SessionID, "Fetch.continueRequest", map[string]any{"requestId": p.RequestID})
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	go a.navigate(sid, allowed.URL+"/page?x")
	<-done
	t.Logf("Fetch.getResponseBody of the frame: %q", body)
	if strings.Contains(body, "account-of-zzp-login-cookie") {
		t.Errorf("a client held to 127.0.0.1 read the person's logged-in page of %s through Fetch.getResponseBody on its page's session", bankURL)
	}
	a.mu.Lock()
	for _, e := range a.events {
		if strings.Contains(string(e.Params), "zzp-login-cookie") {
			t.Errorf("event %s on session %s carried the person's login cookie of %s: %.300s", e.Method, e.SessionID, bankURL, e.Params)
		}
	}
	a.mu.Unlock()
}
