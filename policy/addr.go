package policy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Class is what kind of network an address belongs to.
type Class string

// The classes of address. Only ClassPublic is reachable without
// AllowPrivateNetworks or an allowlist entry that names the host.
const (
	ClassPublic      Class = "public"
	ClassLoopback    Class = "loopback"    // 127.0.0.0/8, ::1
	ClassPrivate     Class = "private"     // 10/8, 172.16/12, 192.168/16, fc00::/7
	ClassLinkLocal   Class = "link-local"  // 169.254/16, fe80::/10
	ClassCGNAT       Class = "cgnat"       // 100.64/10, shared address space
	ClassMetadata    Class = "metadata"    // cloud metadata: 169.254.169.254, fd00:ec2::254
	ClassUnspecified Class = "unspecified" // 0.0.0.0/8, ::
	ClassMulticast   Class = "multicast"   // 224/4, ff00::/8
	ClassBroadcast   Class = "broadcast"   // 255.255.255.255
	ClassReserved    Class = "reserved"    // 240/4, benchmarking, IETF, IPv4-compatible IPv6 ...
)

// privateOK lists the classes that AllowPrivateNetworks opens. Metadata
// and the unspecified address stay closed: nothing an agent should reach
// lives there that an explicit allowlist entry could not name.
var privateOK = map[Class]bool{ClassLoopback: true, ClassPrivate: true, ClassLinkLocal: true, ClassCGNAT: true}

var (
	metadataV4 = netip.MustParseAddr("169.254.169.254")
	metadataV6 = netip.MustParseAddr("fd00:ec2::254")
)

var v4Classes = []struct {
	p netip.Prefix
	c Class
}{
	{netip.MustParsePrefix("0.0.0.0/8"), ClassUnspecified},
	{netip.MustParsePrefix("127.0.0.0/8"), ClassLoopback},
	{netip.MustParsePrefix("10.0.0.0/8"), ClassPrivate},
	{netip.MustParsePrefix("172.16.0.0/12"), ClassPrivate},
	{netip.MustParsePrefix("192.168.0.0/16"), ClassPrivate},
	{netip.MustParsePrefix("169.254.0.0/16"), ClassLinkLocal},
	{netip.MustParsePrefix("100.64.0.0/10"), ClassCGNAT},
	{netip.MustParsePrefix("192.0.0.0/24"), ClassReserved},
	{netip.MustParsePrefix("192.0.2.0/24"), ClassReserved},
	{netip.MustParsePrefix("198.18.0.0/15"), ClassReserved},
	{netip.MustParsePrefix("198.51.100.0/24"), ClassReserved},
	{netip.MustParsePrefix("203.0.113.0/24"), ClassReserved},
	{netip.MustParsePrefix("224.0.0.0/4"), ClassMulticast},
	{netip.MustParsePrefix("255.255.255.255/32"), ClassBroadcast},
	{netip.MustParsePrefix("240.0.0.0/4"), ClassReserved},
}

var (
	nat64   = netip.MustParsePrefix("64:ff9b::/96")
	nat64L  = netip.MustParsePrefix("64:ff9b:1::/48")
	sixTo4  = netip.MustParsePrefix("2002::/16")
	v4compt = netip.MustParsePrefix("::/96")
	ula     = netip.MustParsePrefix("fc00::/7")
	siteLoc = netip.MustParsePrefix("fec0::/10")
	doc6    = netip.MustParsePrefix("2001:db8::/32")
)

// Classify says what kind of network ip belongs to. IPv6 forms that carry
// an IPv4 address (mapped, NAT64, 6to4) are classified by that address,
// since that is where the packets go.
func Classify(ip netip.Addr) Class {
	ip = ip.WithZone("")
	if ip.Is4In6() {
		ip = ip.Unmap()
	}
	if ip.Is4() {
		if ip == metadataV4 {
			return ClassMetadata
		}
		for _, c := range v4Classes {
			if c.p.Contains(ip) {
				return c.c
			}
		}
		return ClassPublic
	}
	switch {
	case ip == metadataV6:
		return ClassMetadata
	case ip.IsUnspecified():
		return ClassUnspecified
	case ip.IsLoopback():
		return ClassLoopback
	case nat64.Contains(ip), nat64L.Contains(ip):
		b := ip.As16()
		return Classify(netip.AddrFrom4([4]byte(b[12:16])))
	case sixTo4.Contains(ip):
		b := ip.As16()
		return Classify(netip.AddrFrom4([4]byte(b[2:6])))
	case v4compt.Contains(ip):
		// Deprecated IPv4-compatible addresses (::a.b.c.d) route nowhere
		// sane.
		return ClassReserved
	case ip.IsLinkLocalUnicast():
		return ClassLinkLocal
	case ula.Contains(ip), siteLoc.Contains(ip):
		return ClassPrivate
	case ip.IsMulticast():
		return ClassMulticast
	case doc6.Contains(ip):
		return ClassReserved
	case !ip.IsGlobalUnicast():
		return ClassReserved
	}
	return ClassPublic
}

// errBadHost is a host a browser would not load, or would load somewhere
// other than it seems.
var errBadHost = errors.New("not a valid host")

// canonicalHost turns a URL's host (without the port) into what a browser
// connects to: lower case, percent-decoded, full-width characters folded,
// without a trailing dot; and, when it is an IP address in any spelling a
// browser accepts (0x7f000001, 2130706433, 0177.0.0.1, 127.1), that
// address.
func canonicalHost(h string) (string, netip.Addr, error) {
	if strings.Contains(h, "%") {
		u, err := url.PathUnescape(h)
		if err != nil {
			return "", netip.Addr{}, fmt.Errorf("%w: %q has a bad percent-encoding", errBadHost, h)
		}
		h = u
	}
	if !utf8.ValidString(h) {
		// A browser refuses such a host (the extension's URL parser does).
		return "", netip.Addr{}, fmt.Errorf("%w: %q is not UTF-8", errBadHost, h)
	}
	h = foldWidth(strings.ToLower(h))
	if strings.HasPrefix(h, "[") {
		if !strings.HasSuffix(h, "]") {
			return "", netip.Addr{}, fmt.Errorf("%w: %q", errBadHost, h)
		}
		ip, err := netip.ParseAddr(h[1 : len(h)-1])
		if err != nil || ip.Zone() != "" || !ip.Is6() {
			return "", netip.Addr{}, fmt.Errorf("%w: %q is not an IPv6 address", errBadHost, h)
		}
		return ip.String(), ip, nil
	}
	h = strings.TrimSuffix(h, ".")
	if h == "" {
		return "", netip.Addr{}, fmt.Errorf("%w: the host is empty", errBadHost)
	}
	if strings.HasPrefix(h, ".") || strings.HasSuffix(h, ".") || strings.Contains(h, "..") {
		// No DNS name has an empty label; and with only one trailing dot
		// dropped, "100.." would be a name here and 0.0.0.100 when
		// checked again.
		return "", netip.Addr{}, fmt.Errorf("%w: %q has an empty label", errBadHost, h)
	}
	if ip, err := netip.ParseAddr(h); err == nil && ip.Is6() && ip.Zone() == "" {
		// A bare IPv6 address, as a pattern may give it.
		return ip.String(), ip, nil
	}
	if endsInNumber(h) {
		ip, err := parseIPv4(h)
		if err != nil {
			return "", netip.Addr{}, err
		}
		return ip.String(), ip, nil
	}
	for _, r := range h {
		if r <= ' ' || r == 0x7f || strings.ContainsRune(`/\?#@:[]<>^|%`, r) {
			return "", netip.Addr{}, fmt.Errorf("%w: %q contains %q", errBadHost, h, r)
		}
	}
	return h, netip.Addr{}, nil
}

// foldWidth maps full-width ASCII and the ideographic full stops to ASCII,
// as a browser's IDNA mapping does, so that １２７。０。０。１ is seen as
// 127.0.0.1.
func foldWidth(s string) string {
	if isASCII(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 0xFF01 && r <= 0xFF5E:
			r -= 0xFEE0
		case r == 0x3002 || r == 0xFF61:
			r = '.'
		}
		b.WriteRune(r)
	}
	return strings.ToLower(b.String())
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// endsInNumber is the WHATWG URL test for a host that must parse as IPv4.
func endsInNumber(h string) bool {
	parts := strings.Split(h, ".")
	last := parts[len(parts)-1]
	if last == "" {
		return false
	}
	if strings.Trim(last, "0123456789") == "" {
		return true
	}
	if strings.HasPrefix(last, "0x") && strings.Trim(last[2:], "0123456789abcdef") == "" {
		return true
	}
	return false
}

// parseIPv4 parses an IPv4 host the way browsers do (WHATWG URL): one to
// four parts, each decimal, octal (leading 0) or hex (0x); the last part
// fills the remaining bytes.
func parseIPv4(h string) (netip.Addr, error) {
	parts := strings.Split(h, ".")
	if len(parts) > 4 {
		return netip.Addr{}, fmt.Errorf("%w: %q has more than four parts of an IPv4 address", errBadHost, h)
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, err := parseV4Part(p)
		if err != nil {
			return netip.Addr{}, fmt.Errorf("%w: %q is not an IPv4 address", errBadHost, h)
		}
		nums[i] = n
	}
	var v uint64
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, fmt.Errorf("%w: %q: part %d is over 255", errBadHost, h, i+1)
		}
		v |= n << (8 * (3 - i))
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, fmt.Errorf("%w: %q is out of the IPv4 range", errBadHost, h)
	}
	v |= last
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), nil
}

func parseV4Part(p string) (uint64, error) {
	if p == "" {
		return 0, errBadHost
	}
	base := 10
	switch {
	case strings.HasPrefix(p, "0x"):
		p, base = p[2:], 16
		if p == "" {
			return 0, nil
		}
	case len(p) > 1 && p[0] == '0':
		p, base = p[1:], 8
	}
	n, err := strconv.ParseUint(p, base, 64)
	if err != nil || n > 0xffffffff {
		return 0, errBadHost
	}
	return n, nil
}

// Resolver looks up the addresses of a host name; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// dnsCache keeps lookups for a short while: a page load asks for the same
// host on every redirect hop and every action.
type dnsCache struct {
	mu sync.Mutex
	m  map[string]dnsEntry
}

type dnsEntry struct {
	addrs []netip.Addr
	exp   time.Time
}

const dnsTTL = 30 * time.Second

func (c *dnsCache) lookup(ctx context.Context, r Resolver, host string) ([]netip.Addr, error) {
	c.mu.Lock()
	if e, ok := c.m[host]; ok && time.Now().Before(e.exp) {
		c.mu.Unlock()
		return e.addrs, nil
	}
	c.mu.Unlock()
	if r == nil {
		r = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("no address for %s", host)
	}
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]dnsEntry{}
	}
	c.m[host] = dnsEntry{addrs: addrs, exp: time.Now().Add(dnsTTL)}
	c.mu.Unlock()
	return addrs, nil
}
