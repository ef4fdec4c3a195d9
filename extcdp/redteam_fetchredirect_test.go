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

// TestRedTeamFetchReadsARedirectOutside: a client held to 127.0.0.1
// intercepts its own tab's requests at the response stage (Playwright's
// route) and navigates to an allowed URL that redirects to 127.0.0.2: the
// outside document's response is paused for it before the tab commits,
// and it reads it with Fetch.getResponseBody.
func TestRedTeamFetchReadsARedirectOutside(t *testing.T) {
	srv, tok := endpoint(t)
	var bankURL string
	allowed := serveAt(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/go" {
			http.Redirect(w, r, bankURL+"/account", http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<title>allowed</title>allowed")
	})
	bank := serveAt(t, "127.0.0.2", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<title>bank</title>zzp-balance-secret")
	})
	bankURL = bank.URL
	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}})
	_, sid := a.open(allowed.URL + "/page")
	a.eval(sid, "1")
	a.must(sid, "Fetch.enable", map[string]any{"patterns": []map[string]any{{"urlPattern": "*", "requestStage": "Response"}}})
	var body, seen string
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
				if strings.HasPrefix(p.Request.URL, bank.URL) {
					seen = p.Request.URL
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
	go a.navigate(sid, allowed.URL+"/go")
	<-done
	t.Logf("paused for the client: %q; body read: %q", seen, body)
	if strings.Contains(body, "zzp-balance-secret") {
		t.Errorf("a client held to 127.0.0.1 read a page of 127.0.0.2 through Fetch.getResponseBody of its navigation's redirect")
	}
}
