package extcdp_test

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestContextCookiesAreTheClientsPages: Storage.getCookies and
// setCookies at the browser level (Playwright's context.cookies and
// addCookies) read the cookies of the client's own pages only, and set
// none outside a client's domains. Set before any page is open (Playwright's
// newContext({storageState})), they are held for the first one.
func TestContextCookiesAreTheClientsPages(t *testing.T) {
	a := dialRaw(t)
	// With no page of its own, nothing to read; what it sets waits for its
	// first page.
	if got := string(a.must("", "Storage.getCookies", nil)); got != `{"cookies":[]}` {
		t.Errorf("Storage.getCookies with no page: %s", got)
	}
	a.must("", "Livetab.setPolicy", map[string]any{"domains": []string{"127.0.0.1"}})
	if _, err := a.call("", "Storage.setCookies", map[string]any{"cookies": []map[string]any{{"name": "out", "value": "v", "url": "http://other.test/"}}}); err == nil || !strings.Contains(err.Error(), "outside the domains") {
		t.Errorf("Storage.setCookies with no page, of a site outside the domains: %v, want refused", err)
	}
	a.must("", "Storage.setCookies", map[string]any{"cookies": []map[string]any{{"name": "held", "value": "v", "url": site.URL}}})
	id := field(a.must("", "Target.createTarget", map[string]any{"url": "about:blank"}), "targetId")
	s := field(a.must("", "Target.attachToTarget", map[string]any{"targetId": id, "flatten": true}), "sessionId")
	a.navigate(s, site.URL+"/form")
	if got := a.eval(s, "document.cookie"); !strings.Contains(got, "held=v") {
		t.Errorf("the cookie set before any page was open is not the first page's: %q", got)
	}
	a.must(s, "Network.deleteCookies", map[string]any{"name": "held", "url": site.URL})

	if _, err := a.call("", "Storage.setCookies", map[string]any{"cookies": []map[string]any{{"name": "out", "value": "v", "url": "http://other.test/"}}}); err == nil || !strings.Contains(err.Error(), "outside the domains") {
		t.Errorf("Storage.setCookies of a site outside the domains: %v, want refused", err)
	}
	a.must("", "Storage.setCookies", map[string]any{"cookies": []map[string]any{{"name": "ctxcookie", "value": "v", "url": site.URL}}})
	got := string(a.must("", "Storage.getCookies", nil))
	if !strings.Contains(got, "ctxcookie") {
		t.Errorf("Storage.getCookies does not list the cookie of the client's page: %s", got)
	}
	// The person's cookie of another site, set behind the client's back.
	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	persons := func(expires float64) {
		if _, err := u.Call(context.Background(), "Storage.setCookies", map[string]any{"cookies": []map[string]any{{"name": "persons", "value": "secret", "url": "http://other.test/", "expires": expires}}}); err != nil {
			t.Fatal(err)
		}
	}
	persons(float64(time.Now().Add(time.Hour).Unix()))
	defer persons(1)
	if all, err := u.Call(context.Background(), "Storage.getCookies", nil); err != nil || !strings.Contains(string(all), "secret") {
		t.Fatalf("the person's cookie was not set: %s %v", all, err)
	}
	if got := string(a.must("", "Storage.getCookies", nil)); strings.Contains(got, "persons") || strings.Contains(got, "secret") {
		t.Errorf("Storage.getCookies handed the client the person's cookie of another site: %s", got)
	}
	a.must(s, "Network.deleteCookies", map[string]any{"name": "ctxcookie", "url": site.URL})
}
