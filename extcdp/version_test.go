package extcdp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// Browser.getVersion and /json/version name the browser as Chrome's own do:
// Playwright's and Puppeteer's browser.version() read the product, whose
// full version the reduced user agent hides (it read "156.0.0.0" through
// livetab, "156.0.8078.108" on Chrome: the compat sweep).
func TestVersionIsChromes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	u, err := env.User(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	res, err := u.Call(ctx, "Browser.getVersion", nil)
	if err != nil {
		t.Fatal(err)
	}
	var chrome struct{ Product, UserAgent string }
	if err := json.Unmarshal(res, &chrome); err != nil {
		t.Fatal(err)
	}
	srv, tok := endpoint(t)
	c := dialRawTo(t, srv, tok)
	var ours struct{ Product, UserAgent string }
	if err := json.Unmarshal(c.must("", "Browser.getVersion", nil), &ours); err != nil {
		t.Fatal(err)
	}
	if ours.Product != chrome.Product {
		t.Errorf("Browser.getVersion product: %q through livetab, %q on Chrome", ours.Product, chrome.Product)
	}
	if ours.UserAgent != chrome.UserAgent {
		t.Errorf("Browser.getVersion userAgent: %q through livetab, %q on Chrome", ours.UserAgent, chrome.UserAgent)
	}
	resp, err := http.Get(srv.URL + "/json/version?token=" + tok)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct{ Browser string }
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	if v.Browser != chrome.Product {
		t.Errorf("/json/version Browser: %q, want %q", v.Browser, chrome.Product)
	}
}
