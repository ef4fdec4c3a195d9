package policy

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/livetab/livetab/page"
)

// hashDNS is the fuzzer's DNS: it never leaves the process. A name that a
// real resolver would refuse (not letters, digits, '-', '_' and dots) does
// not resolve; any other name resolves, by its hash, to a public address, to
// loopback, to a public and a private address (rebinding), or not at all.
type hashDNS struct{}

func (hashDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	for _, r := range host {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return nil, fmt.Errorf("lookup %q: no such host", host)
		}
	}
	h := fnv.New32a()
	h.Write([]byte(host))
	switch h.Sum32() % 4 {
	case 0:
		return []netip.Addr{netip.MustParseAddr("93.184.215.14")}, nil
	case 1:
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	case 2:
		return []netip.Addr{netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("10.0.0.7")}, nil
	}
	return nil, fmt.Errorf("lookup %s: no such host", host)
}

// browserHost is where a browser's URL parser (WHATWG URL, special
// schemes) takes a URL: its host, percent-decoded, before the rest of host
// parsing; web false when the URL is not http(s), ok false when the browser
// would refuse it. It models what a
// policy check must agree with: leading and trailing C0 controls and
// spaces dropped, tabs and newlines removed anywhere, any run of / and \
// after the scheme, the authority ending at / \ ? #, userinfo up to the
// last @, the port after the first : outside brackets.
func browserHost(raw string) (host string, web, ok bool) {
	raw = strings.TrimFunc(raw, func(r rune) bool { return r <= ' ' })
	raw = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(raw)
	scheme, rest, ok := strings.Cut(raw, ":")
	if !ok || scheme == "" {
		return "", false, false
	}
	for i, r := range scheme {
		alpha := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !alpha && (i == 0 || !(r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return "", false, false
		}
	}
	if s := strings.ToLower(scheme); s != "http" && s != "https" {
		return "", false, false
	}
	rest = strings.TrimLeft(rest, `/\`)
	if i := strings.IndexAny(rest, `/\?#`); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		rest = rest[i+1:]
	}
	host, port := rest, ""
	inBrackets := false
	for i, r := range rest {
		switch r {
		case '[':
			inBrackets = true
		case ']':
			inBrackets = false
		case ':':
			if !inBrackets {
				host, port = rest[:i], rest[i+1:]
			}
		}
		if host != rest {
			break
		}
	}
	// The host is percent-decoded once; a % left over is forbidden.
	if h, err := url.PathUnescape(host); err == nil && !strings.Contains(h, "%") {
		host = h
	} else {
		return "", true, false
	}
	if strings.Trim(port, "0123456789") != "" || len(strings.TrimLeft(port, "0")) > 5 ||
		len(strings.TrimLeft(port, "0")) == 5 && strings.TrimLeft(port, "0") > "65535" || host == "" {
		return "", true, false
	}
	return host, true, true
}

// entryAllows is what an allowlist entry means, written apart from
// compilePattern: "*.d" any name ending in ".d", an address or CIDR range
// the addresses in it (IPv4 also as IPv4-mapped IPv6), a name that name.
func entryAllows(entry, host string, ip netip.Addr) bool {
	e := strings.TrimSpace(strings.ToLower(entry))
	if pr, err := netip.ParsePrefix(e); err == nil {
		if !ip.IsValid() {
			return false
		}
		return pr.Contains(ip) || pr.Contains(ip.Unmap()) || ip.Is4() && pr.Contains(netip.AddrFrom16(ip.As16()))
	}
	if rest, ok := strings.CutPrefix(e, "*."); ok {
		d, dip, err := canonicalHost(rest)
		return err == nil && !dip.IsValid() && !ip.IsValid() && strings.HasSuffix(host, "."+d)
	}
	d, dip, err := canonicalHost(strings.TrimSuffix(strings.TrimPrefix(e, "["), "]"))
	switch {
	case err != nil:
		return false
	case dip.IsValid():
		return ip.IsValid() && dip.Unmap() == ip.Unmap()
	}
	return !ip.IsValid() && host == d
}

// urlHost formats a canonical host for a URL.
func urlHost(host string, ip netip.Addr) string {
	if ip.Is6() {
		return "[" + ip.String() + "]"
	}
	return host
}

// FuzzPolicyURL checks the navigation guard on any URL against any
// allowlist entry. Invariants: no panic; canonicalHost and compilePattern
// are idempotent; an allowed URL is http(s), its host is where a browser
// would go, it matches an allow entry (unless AnyDomain), a private
// address in it is allowed only when an exact entry names it (or
// AllowPrivateNetworks covers it), and the bare host is allowed as well.
func FuzzPolicyURL(f *testing.F) {
	for _, s := range []struct {
		url, pattern string
		flags        uint8
	}{
		{"https://example.com/", "example.com", 0},
		{"http://www.example.com/a?b", "*.example.com", 0},
		{"https://example.com@evil.test/", "example.com", 0},
		{"https://evil.test\\@example.com/", "example.com", 0},
		{"https://evil.test%5c@example.com/", "example.com", 0},
		{"http://evil.test#@example.com/", "example.com", 0},
		{"http://evil.test?@example.com/", "example.com", 0},
		{"http:\\\\example.com\\", "example.com", 0},
		{"http:example.com", "example.com", 0},
		{"  http://example.com:80/", "example.com", 0},
		{"http://0x7f000001/", "127.0.0.1", 0},
		{"http://2130706433/", "", 1},
		{"http://0177.0.0.1/", "", 1},
		{"http://127.1/", "127.0.0.0/8", 0},
		{"http://[::ffff:127.0.0.1]/", "127.0.0.1", 0},
		{"http://[::ffff:7f00:1]:8080/", "::ffff:127.0.0.0/104", 0},
		{"http://[64:ff9b::a9fe:a9fe]/", "", 3},
		{"http://[fe80::1%25eth0]/", "fe80::/10", 0},
		{"http://１２７。０。０。１/", "127.0.0.1", 0},
		{"http://%31%32%37.0.0.1/", "127.0.0.1", 0},
		{"http://%2531%2532%2537.0.0.1/", "127.0.0.1", 0},
		{"http://ex%C3%A4mple.com/", "exämple.com", 0},
		{"http://example.com%E3%80%82evil.test/", "*.evil.test", 0},
		{"http://example.com%40evil.test/", "example.com", 1},
		{"http://[::1]:80@example.com/", "example.com", 0},
		{"http://example.com:80:80/", "example.com", 0},
		{"http://example.com\t/", "example.com", 0},
		{"http://100../", "", 1},
		{"http://bank.example.com../", "bank.example.com", 1},
		{"http://bücher.de/", "bücher.de", 0},
		{"http://xn--bcher-kva.de/", "*.de", 0},
		{"http://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ/", "", 1},
		{"http://localhost./", "localhost", 0},
		{"http://app.localhost/", "*.localhost", 2},
		{"http://169.254.169.254/", "169.254.169.254", 3},
		{"http://10.9.1.1/", "10.9.0.0/16", 0},
		{"HTTPS://EXAMPLE.COM./", "Example.Com.", 0},
		{"javascript:alert(1)//http://example.com", "example.com", 1},
		{"ftp://example.com/", "example.com", 0},
		{"http://user:pass@example.com:65535/", "[example.com]", 0},
		{"http://example.com:65536/", "example.com:80", 0},
		{"http://a.b.c.d.e/", "*.*.c", 0},
		{"http://0/", "0.0.0.0/0", 0},
		{"http://[::]/", "::/0", 0},
	} {
		f.Add(s.url, s.pattern, s.flags)
	}
	f.Fuzz(func(t *testing.T, raw, pat string, flags uint8) {
		ctx := context.Background()
		// Parsing is idempotent.
		for _, h := range []string{raw, pat} {
			c, ip, err := canonicalHost(h)
			if err != nil {
				continue
			}
			c2, ip2, err := canonicalHost(c)
			if err != nil || c2 != c || ip2 != ip {
				t.Fatalf("canonicalHost(%q) = %q %v, but canonicalHost of that = %q %v %v", h, c, ip, c2, ip2, err)
			}
		}
		if cp, err := compilePattern(pat); err == nil {
			var text string
			switch {
			case cp.suffix != "":
				text = "*" + cp.suffix
			case cp.host != "":
				text = cp.host
			case cp.ip.IsValid():
				text = cp.ip.String()
			case cp.prefix.IsValid():
				text = cp.prefix.String()
			default:
				t.Fatalf("compilePattern(%q) accepted a pattern that matches nothing", pat)
			}
			cp2, err := compilePattern(text)
			cp2.raw = cp.raw
			if err != nil || cp2 != cp {
				t.Fatalf("compilePattern(%q) = %+v, written %q, which compiles to %+v %v", pat, cp, text, cp2, err)
			}
			if cp.exact() && cp.host != "" && !cp.match(cp.host, netip.Addr{}) {
				t.Fatalf("pattern %q does not match its own host %q", pat, cp.host)
			}
		}

		p := &Policy{
			AllowDomains:         []string{pat},
			AnyDomain:            flags&1 != 0,
			AllowPrivateNetworks: flags&2 != 0,
			Resolver:             hashDNS{},
		}
		if pat == "" {
			p.AllowDomains = nil
		}
		host, err := p.checkURL(ctx, raw, true)
		var de *DeniedError
		if err != nil && !errors.As(err, &de) {
			t.Fatalf("CheckURL(%q) failed without a denial: %v", raw, err)
		}
		if err != nil {
			return
		}
		// Allowed: the URL must be what it seems.
		bh, web, ok := browserHost(raw)
		if !web {
			t.Fatalf("%q allowed (host %q), but a browser would not load it as http(s)", raw, host)
		}
		// A URL the browser refuses is harmless: the policy reads
		// "%2531" as 1 where a browser stops at the % left over.
		if canon, _, err := canonicalHost(bh); ok && (err != nil || canon != host) {
			t.Fatalf("%q allowed for host %q, but a browser would go to %q (%q, %v)", raw, host, bh, canon, err)
		}
		_, ip, _ := canonicalHost(host)
		named := false
		matched := false
		for _, pt := range p.allow {
			if pt.match(host, ip) {
				matched = true
				named = named || pt.exact()
			}
		}
		if !p.AnyDomain && !matched {
			t.Fatalf("%q allowed, but its host %q matches no entry of %q", raw, host, p.AllowDomains)
		}
		if !p.AnyDomain && !entryAllows(pat, host, ip) {
			t.Fatalf("%q allowed, but by the entry's plain meaning %q does not allow %q", raw, pat, host)
		}
		if !named {
			addrs := []netip.Addr{ip}
			if !ip.IsValid() {
				if host == "localhost" || strings.HasSuffix(host, ".localhost") {
					addrs = []netip.Addr{netip.MustParseAddr("127.0.0.1")}
				} else if addrs, err = (hashDNS{}).LookupNetIP(ctx, "ip", host); err != nil {
					t.Fatalf("%q allowed, but its host %q does not resolve", raw, host)
				}
			}
			for _, a := range addrs {
				if c := Classify(a); c != ClassPublic && !(p.AllowPrivateNetworks && privateOK[c]) {
					t.Fatalf("%q allowed, but %q is a %s address (%s) that no exact entry of %q names", raw, host, c, a, p.AllowDomains)
				}
			}
		}
		bare := "http://" + urlHost(host, ip) + "/"
		if err := p.CheckURL(ctx, bare); err != nil {
			t.Fatalf("%q allowed, but its bare host %q is not: %v", raw, bare, err)
		}
		// The same entry as a confirm domain: navigating to a host it
		// matches needs the person's yes, however the URL spells it.
		if cp, err := compilePattern(pat); err == nil && cp.match(host, ip) {
			pc := &Policy{AllowDomains: p.AllowDomains, AnyDomain: p.AnyDomain, AllowPrivateNetworks: p.AllowPrivateNetworks,
				ConfirmDomains: []string{pat}, Resolver: hashDNS{}}
			err := pc.CheckAction(ctx, page.Action{Kind: page.KindNavigate, Op: "navigate", Target: raw})
			if !errors.As(err, &de) || de.Rule != RuleConfirm {
				t.Fatalf("navigating to %q (host %q) with confirm domain %q: want a confirm denial, got %v", raw, host, pat, err)
			}
		}
	})
}
