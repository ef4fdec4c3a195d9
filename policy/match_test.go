package policy

import (
	"os"
	"strings"
	"testing"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
)

// The vectors the extension checks too (extension/test/policy.test.js): one
// rule for domain patterns at both ends.
func TestDomainVectors(t *testing.T) {
	b, err := os.ReadFile("testdata/domains.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Hosts []struct {
			Pattern string `json:"pattern"`
			Host    string `json:"host"`
			Match   bool   `json:"match"`
		} `json:"hosts"`
		URLs []struct {
			URL     string   `json:"url"`
			Domains []string `json:"domains"`
			Allowed bool     `json:"allowed"`
		} `json:"urls"`
		StricterInGo []struct {
			URL     string   `json:"url"`
			Domains []string `json:"domains"`
		} `json:"urlsStricterInGo"`
	}
	if err := jsonv2.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	for _, h := range v.Hosts {
		if got := MatchHost(h.Host, []string{h.Pattern}); got != h.Match {
			t.Errorf("MatchHost(%q, %q) = %v, want %v", h.Host, h.Pattern, got, h.Match)
		}
		if h.Pattern == "*" {
			continue // AllowDomains refuses "*": AnyDomain says it
		}
		// The allowlist of a Policy follows the same rule.
		// A malformed pattern is refused there, and a malformed host
		// matches nothing.
		p := &Policy{AllowDomains: []string{h.Pattern}}
		if err := p.Validate(); err != nil {
			if h.Match {
				t.Errorf("AllowDomains refuses %q: %v", h.Pattern, err)
			}
			continue
		}
		host := h.Host
		if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
			host = "[" + host + "]"
		}
		hh, ip, err := canonicalHost(host)
		if err != nil {
			if h.Match {
				t.Errorf("%q is not a host: %v", h.Host, err)
			}
			continue
		}
		got := false
		for _, c := range p.allow {
			got = got || c.match(hh, ip)
		}
		if got != h.Match {
			t.Errorf("AllowDomains %q on %q: %v, want %v", h.Pattern, h.Host, got, h.Match)
		}
	}
	for _, u := range v.URLs {
		if got := MatchURL(u.URL, u.Domains); got != u.Allowed {
			t.Errorf("MatchURL(%q, %q) = %v, want %v", u.URL, u.Domains, got, u.Allowed)
		}
	}
	for _, u := range v.StricterInGo {
		if MatchURL(u.URL, u.Domains) {
			t.Errorf("MatchURL(%q, %q) allows a URL Go's parser reads otherwise than a browser", u.URL, u.Domains)
		}
	}
}
