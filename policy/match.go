package policy

import (
	"net/url"
	"strings"
)

// MatchURL reports whether raw is within the domain patterns, by the rule of
// AllowDomains ("*.example.com" matches its subdomains, not example.com;
// "*" matches every host), without the address checks: no name is
// resolved. It is the check the relay and the extension make for a
// client's policy (Livetab.setPolicy): no patterns allow everything,
// about:blank is always allowed, and otherwise only http and https URLs
// whose host matches a pattern. The extension's lib/policy.js checks the
// same vectors (testdata/domains.json).
func MatchURL(raw string, patterns []string) bool {
	if len(patterns) == 0 || raw == "" || raw == "about:blank" {
		return true
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return MatchHost(u.Hostname(), patterns)
}

// MatchHost reports whether host matches one of the patterns, as MatchURL.
func MatchHost(host string, patterns []string) bool {
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		host = "[" + host + "]"
	}
	h, ip, err := canonicalHost(host)
	if err != nil {
		return false
	}
	for _, raw := range patterns {
		if strings.TrimSpace(raw) == "*" {
			return true
		}
		p, err := compilePattern(raw)
		if err == nil && p.match(h, ip) {
			return true
		}
	}
	return false
}
