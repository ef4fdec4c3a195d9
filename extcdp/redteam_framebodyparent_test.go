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

// requestIDsOf lists the requestIds of events method on session sid whose
// params mention s.
func (c *rawClient) requestIDsOf(method, sid, s string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ids []string
	for _, e := range c.events {
		if e.Method == method && e.SessionID == sid && strings.Contains(string(e.Params), s) {
			var p struct {
				RequestID string `json:"requestId"`
			}
			jsonv2.Unmarshal(e.Params, &p, wire.Options)
			ids = append(ids, p.RequestID)
		}
	}
	return ids
}

// TestRedTeamFrameDocumentBodyThroughTheParent: a client held to
// 127.0.0.1 reads the document of a 127.0.0.2 frame in its allowed page
// through the page's own session: Network.getResponseBody of the frame's
// navigation request, and Fetch (requestStage Response, as Playwright's
// route does) getResponseBody of it.
func TestRedTeamFrameDocumentBodyThroughTheParent(t *testing.T) {
	srv, tok := endpoint(t)
	bank := serveAt(t, "127.0.0.2", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<title>bank</title>zzp-frame-secret")
	})
	allowed := serveAt(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/blank" {
			fmt.Fprint(w, "<title>blank</title>")
			return
		}
		fmt.Fprintf(w, `<title>agent</title><iframe id=f src="%s/frame?%s"></iframe>`, bank.URL, r.URL.RawQuery)
	})
	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}})
	_, sid := a.open(allowed.URL + "/blank")
	a.eval(sid, "1")
	a.must(sid, "Network.enable", map[string]any{})
	a.must(sid, "Page.enable", map[string]any{})
	if err := a.navigate(sid, allowed.URL+"/page?net"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	ids := a.requestIDsOf("Network.requestWillBeSent", sid, bank.URL)
	t.Logf("Network: requests of the frame seen on the page's session: %v", ids)
	for _, id := range ids {
		res, err := a.call(sid, "Network.getResponseBody", map[string]any{"requestId": id})
		t.Logf("Network.getResponseBody %s: %.200s %v", id, res, err)
		if strings.Contains(string(res), "zzp-frame-secret") {
			t.Errorf("Network.getResponseBody on the page's session read the 127.0.0.2 frame's document")
		}
	}

	// Fetch at the response stage.
	a.must(sid, "Fetch.enable", map[string]any{"patterns": []map[string]any{{"urlPattern": "*", "requestStage": "Response"}}})
	done := make(chan struct{})
	go func() {
		defer close(done)
		deadline := time.Now().Add(8 * time.Second)
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
					res, err := a.call(e.SessionID, "Fetch.getResponseBody", map[string]any{"requestId": p.RequestID})
					t.Logf("Fetch.getResponseBody of %s on %s: %.200s %v", p.Request.URL, e.SessionID, res, err)
					var b struct {
						Body string `json:"body"`
					}
					jsonv2.Unmarshal(res, &b, wire.Options)
					dec, _ := base64.StdEncoding.DecodeString(b.Body)
					if strings.Contains(string(dec), "zzp-frame-secret") || strings.Contains(b.Body, "zzp-frame-secret") {
						t.Errorf("Fetch.getResponseBody read the 127.0.0.2 frame's document")
					}
				}
				a.call(e.SessionID, "Fetch.continueRequest", map[string]any{"requestId": p.RequestID})
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	go a.navigate(sid, allowed.URL+"/page?fetch")
	<-done
}
