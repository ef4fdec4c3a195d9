// Package policy keeps an agent inside what the person allowed: which sites
// it may read, act on and load, whether it may type, navigate, upload or run
// JavaScript, which actions need the person's confirmation, and what goes
// into the audit log.
//
// A [Policy] is a [page.Guard]: give it to page.New with page.WithGuard and
// every action of the Page is checked before anything reaches the tab, and
// every document request of its tabs — each redirect hop, after DNS
// resolution — before the browser sends it. A denial is a [*DeniedError]
// that names the rule, so that a model (or a person reading the log) knows
// what stopped it and who can change that.
//
// [Policy.Call] wraps one tool call (page's tool surface, or any other tool
// of an agent loop): it writes one audit line per call, with secrets
// redacted, and caps the page-originated text of the result to the budget
// with a note of what was cut.
//
// The navigation guard accepts http and https only. It refuses loopback,
// private, link-local, shared (CGNAT), cloud metadata, unspecified,
// multicast and reserved addresses, however the URL spells them
// (http://0x7f000001, http://2130706433, http://0177.0.0.1, IPv4 in IPv6)
// and whatever a host name resolves to, unless AllowPrivateNetworks is set
// or an allowlist entry names the host itself (127.0.0.1, localhost,
// 10.1.2.0/24). A name checked here can resolve differently a moment later
// in the browser (DNS rebinding); the check on every document request
// narrows that window but cannot close it.
//
// The domains hold the documents of the main frame; an allowed page may
// embed and load from other sites. The address rules hold every request:
// through livetab's extension (livetab mcp pushes the policy to it with
// Livetab.setPolicy), a page's fetches, images, sockets and beacons, those
// of its workers and of its frames of other sites, and those of the tabs
// it opens never reach a private address written as an IP literal or
// localhost. No name is resolved there, and service workers, which serve
// every tab of their site, are not held.
package policy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/livetab/livetab/page"
)

// Action is what the Confirm hook is asked about: the page action, with the
// tab, its URL, the element and the navigation target.
type Action = page.Action

// The rules a denial can name.
const (
	RuleDomain     = "allow-domain"    // the host is not in AllowDomains
	RuleScheme     = "scheme"          // not http or https
	RuleAddress    = "private-network" // the address is loopback, private, metadata...
	RuleReadOnly   = "read-only"
	RuleEval       = "allow-eval"
	RuleConfirm    = "confirm"
	RuleSharedTabs = "shared-tabs"
	RuleDownload   = "download-dir"
	RuleUpload     = "upload-dir"
	RuleConfig     = "config"
)

// ErrDenied is what every denial matches with errors.Is.
var ErrDenied = errors.New("denied by livetab's policy")

// ErrConfirmPending is what a Confirm hook returns when it has started to
// ask the person out of band and the caller will retry the whole tool call
// with the answer (MCP's multi-round-trip elicitation). The action is
// refused for now, and Call writes no audit line for the attempt: the
// retry writes the one that counts.
var ErrConfirmPending = errors.New("waiting for the person's confirmation")

// DeniedError is a denial: the rule that refused the action, and why.
type DeniedError struct {
	Rule   string // one of the Rule constants
	Reason string // what was refused and what the person can change
	Err    error  // the cause, when a hook failed (Confirm, SharedTabs)
}

// Unwrap returns the cause.
func (e *DeniedError) Unwrap() error { return e.Err }

func (e *DeniedError) Error() string {
	return fmt.Sprintf("%v [rule %s]: %s", ErrDenied, e.Rule, e.Reason)
}

// Is reports whether target is ErrDenied.
func (e *DeniedError) Is(target error) bool { return target == ErrDenied }

func deny(rule, format string, args ...any) *DeniedError {
	return &DeniedError{Rule: rule, Reason: fmt.Sprintf(format, args...)}
}

// Policy is what an agent may do. The zero Policy allows reading nothing
// (its allowlist is empty); set AllowDomains, or AnyDomain, to open it. Set
// the fields before first use and leave them alone afterwards; its methods
// are safe for concurrent use.
type Policy struct {
	// AllowDomains are the hosts the agent may read, act on and navigate
	// to: "example.com" (that host only), "*.example.com" (its subdomains,
	// not example.com itself), "localhost", an IP address ("127.0.0.1",
	// "::1") or a CIDR range ("10.1.2.0/24"). An entry that names a host
	// or address exactly also allows it when it is private or loopback; a
	// wildcard entry does not.
	AllowDomains []string
	// AnyDomain allows every host (private addresses still need
	// AllowPrivateNetworks). It must be asked for explicitly, and a
	// program should log that it was.
	AnyDomain bool
	// ReadOnly refuses input (clicks, typing, keys, hovering, dialogs
	// except dismissing one), navigation, uploads and JavaScript.
	ReadOnly bool
	// AllowEval allows running JavaScript the agent wrote in the page.
	AllowEval bool
	// AllowPrivateNetworks allows loopback, private, link-local and CGNAT
	// addresses. Metadata and unspecified addresses stay refused unless an
	// allowlist entry names them.
	AllowPrivateNetworks bool
	// DownloadDir is the directory that captures and downloads go to,
	// chosen by the person. Captures are refused while it is empty.
	DownloadDir string
	// UploadDir is the only directory uploads may read files from
	// (default DownloadDir); uploads of local files are refused while both
	// are empty.
	UploadDir string
	// ConfirmDomains are host patterns (as in AllowDomains) on which
	// mutating actions — input, navigation to them, uploads, JavaScript —
	// need the person's yes from Confirm first.
	ConfirmDomains []string
	// Confirm asks the person whether an action may run. nil refuses
	// every action that needs a confirmation.
	Confirm func(ctx context.Context, a Action) (bool, error)
	// SharedTabs returns the target ids of the tabs the person shared.
	// When set, actions on tabs the Page did not open (page.AttachTab)
	// run only while the tab is shared.
	SharedTabs func(ctx context.Context) ([]string, error)
	// MaxPageText caps the text of a tool result in Call, in characters
	// (about four per token); 0 means no cap.
	MaxPageText int
	// Audit receives one JSON line per tool call (Call) and per action
	// checked outside one; nil writes nothing.
	Audit io.Writer
	// OnCall, when set, hears each tool call of Call with the decision:
	// DecisionAllowed, DecisionDenied, DecisionConfirmed, or
	// DecisionAsking while the person is asked. The agent shows them to
	// the person in the extension's popup.
	OnCall func(tool, decision string)
	// Resolver looks up host names for the address check; nil uses the
	// system's resolver.
	Resolver Resolver

	once    sync.Once
	allow   []pattern
	confirm []pattern
	err     error
	dns     dnsCache
	auditMu sync.Mutex
}

// pattern is a compiled AllowDomains or ConfirmDomains entry.
type pattern struct {
	raw    string
	suffix string       // "*.example.com": ".example.com"
	host   string       // "example.com", "localhost"
	ip     netip.Addr   // "127.0.0.1"
	prefix netip.Prefix // "10.0.0.0/8"
}

// exact reports whether the pattern names one host or address (or a
// range the person wrote out), which allows it even when private.
func (p pattern) exact() bool { return p.suffix == "" }

func (p pattern) match(host string, ip netip.Addr) bool {
	switch {
	case p.suffix != "":
		return !ip.IsValid() && strings.HasSuffix(host, p.suffix)
	case p.host != "":
		return host == p.host
	case p.ip.IsValid():
		return ip.IsValid() && ip.Unmap() == p.ip.Unmap()
	case p.prefix.IsValid():
		return ip.IsValid() && p.prefix.Contains(ip.Unmap())
	}
	return false
}

func compilePattern(raw string) (pattern, error) {
	s := strings.TrimSpace(strings.ToLower(raw))
	p := pattern{raw: raw}
	switch {
	case s == "" || s == "*" || s == "*.":
		return p, fmt.Errorf("policy: domain pattern %q matches everything: use AnyDomain (--any-domain) to allow any domain, explicitly", raw)
	case strings.Contains(s, "://"):
		return p, fmt.Errorf("policy: domain pattern %q: give a host such as example.com, not a URL", raw)
	}
	if pr, err := netip.ParsePrefix(s); err == nil {
		p.prefix = pr.Masked()
		if p.prefix.Addr().Is4In6() {
			p.prefix = netip.PrefixFrom(p.prefix.Addr().Unmap(), p.prefix.Bits()-96)
		}
		return p, nil
	}
	if strings.HasPrefix(s, "*.") {
		rest := s[2:]
		// A * spelled %2A is a * too: it may not hide in what follows.
		if c, _, err := canonicalHost(rest); err != nil || strings.Contains(rest, "*") || strings.Contains(c, "*") {
			return p, fmt.Errorf("policy: domain pattern %q: after *. comes a domain such as example.com", raw)
		}
		p.suffix = "." + strings.TrimSuffix(rest, ".")
		return p, nil
	}
	if strings.Contains(s, "*") {
		return p, fmt.Errorf("policy: domain pattern %q: a * may only start the pattern, as in *.example.com", raw)
	}
	if h, _, err := net.SplitHostPort(s); err == nil {
		return p, fmt.Errorf("policy: domain pattern %q: leave out the port (%s allows every port)", raw, h)
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	host, ip, err := canonicalHost(s)
	if err != nil {
		return p, fmt.Errorf("policy: domain pattern %q: %w", raw, err)
	}
	if strings.Contains(host, "*") {
		// "%2A" is read as "*": refused like it, not taken as a host.
		return p, fmt.Errorf("policy: domain pattern %q: a * may only start the pattern, as in *.example.com, and is not to be escaped", raw)
	}
	if ip.IsValid() {
		p.ip = ip
	} else {
		p.host = host
	}
	return p, nil
}

// HostRule is a domain pattern as the checks read it, for a check written
// elsewhere in the same terms (the relay's check in a page's new-document
// scripts): any host; a suffix (".example.com" of "*.example.com"); one
// host, canonical; or addresses (an address is a prefix of its full
// length, IPv4-mapped ones as IPv4).
type HostRule struct {
	Any    bool
	Suffix string
	Host   string
	Prefix netip.Prefix
}

// HostRules compiles patterns as MatchHost reads them; a pattern MatchHost
// would not match anything with is left out.
func HostRules(patterns []string) []HostRule {
	var out []HostRule
	for _, raw := range patterns {
		if strings.TrimSpace(raw) == "*" {
			out = append(out, HostRule{Any: true})
			continue
		}
		p, err := compilePattern(raw)
		if err != nil {
			continue
		}
		r := HostRule{Suffix: p.suffix, Host: p.host, Prefix: p.prefix}
		if p.ip.IsValid() {
			ip := p.ip.Unmap()
			r.Prefix = netip.PrefixFrom(ip, ip.BitLen())
		}
		out = append(out, r)
	}
	return out
}

// Validate checks the domain patterns. The checks call it on first use and
// refuse everything when it fails.
func (p *Policy) Validate() error {
	p.once.Do(func() {
		for _, raw := range p.AllowDomains {
			c, err := compilePattern(raw)
			if err != nil {
				p.err = err
				return
			}
			p.allow = append(p.allow, c)
		}
		for _, raw := range p.ConfirmDomains {
			c, err := compilePattern(raw)
			if err != nil {
				p.err = fmt.Errorf("confirm domains: %w", err)
				return
			}
			p.confirm = append(p.confirm, c)
		}
	})
	return p.err
}

// Summary describes the policy in one line, for a log at start.
func (p *Policy) Summary() string {
	var parts []string
	if p.AnyDomain {
		parts = append(parts, "ANY domain")
	} else if len(p.AllowDomains) == 0 {
		parts = append(parts, "no domain allowed yet")
	} else {
		parts = append(parts, "domains "+strings.Join(p.AllowDomains, ", "))
	}
	if p.AllowPrivateNetworks {
		parts = append(parts, "private networks allowed")
	}
	if p.ReadOnly {
		parts = append(parts, "read-only")
	}
	if p.AllowEval {
		parts = append(parts, "JavaScript allowed")
	}
	if len(p.ConfirmDomains) > 0 {
		parts = append(parts, "confirm on "+strings.Join(p.ConfirmDomains, ", "))
	}
	if p.DownloadDir != "" {
		parts = append(parts, "captures into "+p.DownloadDir)
	}
	return strings.Join(parts, "; ")
}

// CheckURL checks a URL the agent wants to load (or a tab shows): scheme,
// allowlist and address. It is the navigation guard without an action
// around it.
func (p *Policy) CheckURL(ctx context.Context, raw string) error {
	_, err := p.checkURL(ctx, raw, true)
	return err
}

// checkURL returns the URL's host for the confirm check. domains false
// skips the allowlist (an iframe's request on an allowed page).
func (p *Policy) checkURL(ctx context.Context, raw string, domains bool) (string, error) {
	if err := p.Validate(); err != nil {
		return "", deny(RuleConfig, "%v", err)
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", deny(RuleScheme, "%q is not a URL the agent may load: %v", raw, err)
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		if scheme == "" {
			scheme = "(none)"
		}
		return "", deny(RuleScheme, "the agent may load http and https URLs only, not %s: (%s)", scheme, shortURL(raw))
	}
	host, ip, err := canonicalHost(u.Hostname())
	if err != nil {
		return "", deny(RuleScheme, "%s: %v", shortURL(raw), err)
	}
	var named bool // an exact allowlist entry names the host
	if domains && !p.AnyDomain {
		var hit *pattern
		for i := range p.allow {
			if p.allow[i].match(host, ip) {
				hit = &p.allow[i]
				if hit.exact() {
					break
				}
			}
		}
		if hit == nil {
			allowed := "none yet"
			if len(p.AllowDomains) > 0 {
				allowed = strings.Join(p.AllowDomains, ", ")
			}
			return "", deny(RuleDomain, "%s is outside the allowed domains (%s); the person can add it with --allow-domain %s", host, allowed, host)
		}
		named = hit.exact()
	}
	if !domains || p.AnyDomain {
		// The iframe or any-domain case: an entry that names the host
		// still opens a private address.
		for _, pt := range p.allow {
			if pt.exact() && pt.match(host, ip) {
				named = true
			}
		}
	}
	if named {
		return host, nil
	}
	if err := p.checkAddress(ctx, u.Hostname(), host, ip); err != nil {
		return "", err
	}
	return host, nil
}

// checkAddress refuses a host that is, or resolves to, a non-public
// address.
func (p *Policy) checkAddress(ctx context.Context, orig, host string, ip netip.Addr) error {
	var addrs []netip.Addr
	switch {
	case ip.IsValid():
		addrs = []netip.Addr{ip}
	case host == "localhost" || strings.HasSuffix(host, ".localhost"):
		// Browsers answer these themselves, never through DNS.
		addrs = []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	default:
		var err error
		addrs, err = p.dns.lookup(ctx, p.Resolver, host)
		if err != nil {
			return deny(RuleAddress, "could not resolve %s to check that it is a public address (%v); check the name", host, err)
		}
	}
	for _, a := range addrs {
		c := Classify(a)
		if c == ClassPublic || p.AllowPrivateNetworks && privateOK[c] {
			continue
		}
		what := host
		switch {
		case !ip.IsValid():
			what = fmt.Sprintf("%s resolves to %s, which", host, a)
		case !strings.EqualFold(orig, host):
			what = fmt.Sprintf("%s (that is %s)", orig, host)
		}
		hint := "the person can allow private networks with --allow-private-networks, or this host with --allow-domain " + host
		if !privateOK[c] {
			hint = "the person can allow it only by naming it with --allow-domain " + host
		}
		return deny(RuleAddress, "%s is a %s address, which the agent may not reach; %s", what, c, hint)
	}
	return nil
}

// isDataURL reports whether s is a data: URL, however it is spelled.
func isDataURL(s string) bool {
	s = strings.TrimLeft(s, " \t\n\r\f\x00")
	return len(s) >= 5 && strings.EqualFold(s[:5], "data:")
}

// shortURL keeps a URL short for a message; data: and javascript: URLs can
// be long and hold anything.
func shortURL(s string) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > 80 {
		return string(r[:79]) + "…"
	}
	return s
}

// CheckAction is the page.Guard check before every action.
func (p *Policy) CheckAction(ctx context.Context, a Action) error {
	rec := recordFrom(ctx)
	if rec != nil {
		rec.see(a)
	}
	confirmed, err := p.decide(ctx, a)
	if rec != nil {
		rec.decide(err, confirmed)
	}
	if rec == nil && p.Audit != nil {
		// A page action outside Call: log the decision on its own.
		r := newRecord("page."+a.Op, nil)
		r.see(a)
		r.decide(err, confirmed)
		p.writeAudit(r, page.Result{}, nil, true)
	}
	return err
}

// decide runs the rules in order; the first that refuses names the denial.
// It reports whether the person confirmed the action.
func (p *Policy) decide(ctx context.Context, a Action) (bool, error) {
	if err := p.Validate(); err != nil {
		return false, deny(RuleConfig, "%v", err)
	}
	if a.Adopted && p.SharedTabs != nil {
		ids, err := p.SharedTabs(ctx)
		if err != nil {
			return false, deny(RuleSharedTabs, "could not check that tab %s is still shared (%v); try again", a.Tab, err)
		}
		if !slices.Contains(ids, a.TargetID) {
			return false, deny(RuleSharedTabs, "tab %s is not shared with livetab; the person shares a tab in the livetab extension's popup", a.Tab)
		}
	}
	dismiss := a.Op == "dialog" && a.Text == "dismiss"
	mutating := false
	switch a.Kind {
	case page.KindAct:
		mutating = !dismiss
	case page.KindNavigate, page.KindUpload, page.KindEval:
		mutating = true
	}
	if p.ReadOnly && a.Op == "open" {
		return false, deny(RuleReadOnly, "opening a tab is not allowed in read-only mode, not even a blank one; switch to a tab that is open, or the person can lift it by dropping --read-only")
	}
	if p.ReadOnly && mutating {
		return false, deny(RuleReadOnly, "%s is not allowed in read-only mode (no input, navigation, uploads or JavaScript); the person can lift it by dropping --read-only", a.Op)
	}
	if p.ReadOnly && a.Kind == page.KindCapture && isDataURL(a.Target) {
		return false, deny(RuleReadOnly, "capturing a data: URL saves bytes the agent wrote, not media of the page, which read-only mode does not allow; capture an element or a URL of the page instead")
	}
	switch a.Kind {
	case page.KindEval:
		if !p.AllowEval {
			return false, deny(RuleEval, "running JavaScript in the page is off; use the snapshot, read and action tools instead, or the person can turn it on with --allow-eval")
		}
	case page.KindCapture:
		if p.DownloadDir == "" {
			return false, deny(RuleDownload, "captures need a directory the person chose; the person can set one with --download-dir")
		}
	case page.KindUpload:
		if err := p.checkFiles(a.Files); err != nil {
			return false, err
		}
	}
	if a.Kind == page.KindCapture && a.Target != "" {
		// A URL the page fetches: any host an allowed page may load from
		// (images live on CDNs), but never a private address.
		if u, err := url.Parse(a.Target); err != nil || u.Scheme != "data" && u.Scheme != "blob" {
			if _, err := p.checkURL(ctx, a.Target, false); err != nil {
				return false, err
			}
		}
	}
	var host string
	if a.Kind == page.KindNavigate {
		if a.Target == "" {
			return false, deny(RuleDomain, "cannot tell which page %s would load (there may be none); navigate to a URL instead", a.Op)
		}
		h, err := p.checkURL(ctx, a.Target, true)
		if err != nil {
			return false, err
		}
		host = h
	} else if a.URL != "" && a.URL != "about:blank" {
		h, err := p.checkURL(ctx, a.URL, true)
		if err != nil {
			var de *DeniedError
			if errors.As(err, &de) {
				de.Reason = "the tab shows a page the agent may not " + verb(a.Kind) + ": " + de.Reason
			}
			return false, err
		}
		host = h
	}
	if mutating && host != "" && p.needsConfirm(host) {
		if p.Confirm == nil {
			return false, deny(RuleConfirm, "%s on %s needs the person's confirmation, and there is no way to ask them here", a.Op, host)
		}
		ok, err := p.Confirm(ctx, a)
		if err != nil {
			d := deny(RuleConfirm, "%s on %s needs the person's confirmation: %v", a.Op, host, err)
			d.Err = err
			return false, d
		}
		if !ok {
			return false, deny(RuleConfirm, "the person declined: %s; do not retry it unless they ask", a.Describe())
		}
		return true, nil
	}
	return false, nil
}

func verb(k page.Kind) string {
	switch k {
	case page.KindRead:
		return "read"
	case page.KindCapture:
		return "capture from"
	case page.KindUpload:
		return "upload to"
	case page.KindEval:
		return "run JavaScript in"
	}
	return "act on"
}

func (p *Policy) needsConfirm(host string) bool {
	_, ip, _ := canonicalHost(host)
	for _, pt := range p.confirm {
		if pt.match(host, ip) {
			return true
		}
	}
	return false
}

// checkFiles refuses local files outside the upload directory.
func (p *Policy) checkFiles(files []string) error {
	if len(files) == 0 {
		return nil
	}
	dir := p.UploadDir
	if dir == "" {
		dir = p.DownloadDir
	}
	if dir == "" {
		return deny(RuleUpload, "uploading local files needs a directory the person chose; the person can set one with --upload-dir (or --download-dir)")
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return deny(RuleUpload, "the upload directory %s is not usable: %v", dir, err)
	}
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err != nil {
			return deny(RuleUpload, "%s: %v", f, err)
		}
		rel, err := filepath.Rel(root, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(os.PathSeparator)) || filepath.IsAbs(rel) {
			return deny(RuleUpload, "%s is outside the upload directory %s; only files in it may be uploaded", f, dir)
		}
		// A FIFO or a device would hold the upload (or feed it without
		// end); a directory has no bytes to give.
		if st, err := os.Stat(abs); err == nil && !st.Mode().IsRegular() {
			return deny(RuleUpload, "%s is not a regular file (a directory, FIFO or device); only files are uploaded", f)
		}
	}
	return nil
}

// CheckRequest is the page.Guard check of every document request: the
// main frame's against the whole navigation guard, an iframe's against the
// scheme and address rules (an allowed page may embed other sites).
func (p *Policy) CheckRequest(ctx context.Context, r page.Request) error {
	if !r.MainFrame {
		if u, err := url.Parse(r.URL); err == nil && u.Scheme != "http" && u.Scheme != "https" {
			return nil
		}
	}
	_, err := p.checkURL(ctx, r.URL, r.MainFrame)
	return err
}

var _ page.Guard = (*Policy)(nil)
