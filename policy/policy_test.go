package policy

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/page"
)

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		ip   string
		want Class
	}{
		{"8.8.8.8", ClassPublic},
		{"1.1.1.1", ClassPublic},
		{"172.32.0.1", ClassPublic},
		{"2606:4700:4700::1111", ClassPublic},
		{"127.0.0.1", ClassLoopback},
		{"127.255.0.9", ClassLoopback},
		{"::1", ClassLoopback},
		{"::ffff:127.0.0.1", ClassLoopback},
		{"10.0.0.1", ClassPrivate},
		{"172.16.5.4", ClassPrivate},
		{"172.31.255.255", ClassPrivate},
		{"192.168.1.1", ClassPrivate},
		{"fc00::1", ClassPrivate},
		{"fd12:3456::1", ClassPrivate},
		{"169.254.1.1", ClassLinkLocal},
		{"fe80::1", ClassLinkLocal},
		{"100.64.0.1", ClassCGNAT},
		{"100.127.255.254", ClassCGNAT},
		{"169.254.169.254", ClassMetadata},
		{"fd00:ec2::254", ClassMetadata},
		{"::ffff:169.254.169.254", ClassMetadata},
		{"0.0.0.0", ClassUnspecified},
		{"0.1.2.3", ClassUnspecified},
		{"::", ClassUnspecified},
		{"224.0.0.1", ClassMulticast},
		{"ff02::1", ClassMulticast},
		{"255.255.255.255", ClassBroadcast},
		{"240.0.0.1", ClassReserved},
		{"198.18.0.1", ClassReserved},
		{"64:ff9b::7f00:1", ClassLoopback},  // NAT64 of 127.0.0.1
		{"64:ff9b::808:808", ClassPublic},   // NAT64 of 8.8.8.8
		{"2002:7f00:1::", ClassLoopback},    // 6to4 of 127.0.0.1
		{"2002:a00:1::1", ClassPrivate},     // 6to4 of 10.0.0.1
		{"::7f00:1", ClassReserved},         // IPv4-compatible
		{"2001:db8::1", ClassReserved},      // documentation
		{"fe80::1%eth0", ClassLinkLocal},    // zone
		{"::ffff:10.1.2.3", ClassPrivate},   // mapped
		{"::ffff:100.64.1.1", ClassCGNAT},   // mapped
		{"::ffff:8.8.4.4", ClassPublic},     // mapped
		{"100.63.255.255", ClassPublic},     // just below CGNAT
		{"100.128.0.0", ClassPublic},        // just above
		{"169.254.169.253", ClassLinkLocal}, // beside metadata
	} {
		if got := Classify(netip.MustParseAddr(c.ip)); got != c.want {
			t.Errorf("Classify(%s) = %s, want %s", c.ip, got, c.want)
		}
	}
}

func TestCanonicalHost(t *testing.T) {
	for _, c := range []struct {
		in, host string
		ip       bool
		bad      bool
	}{
		{"Example.COM", "example.com", false, false},
		{"example.com.", "example.com", false, false},
		{"127.0.0.1", "127.0.0.1", true, false},
		{"0x7f000001", "127.0.0.1", true, false},
		{"0X7F000001", "127.0.0.1", true, false},
		{"2130706433", "127.0.0.1", true, false},
		{"0177.0.0.1", "127.0.0.1", true, false},
		{"0177.0.0.01", "127.0.0.1", true, false},
		{"127.1", "127.0.0.1", true, false},
		{"127.0.1", "127.0.0.1", true, false},
		{"0x7f.1", "127.0.0.1", true, false},
		{"017700000001", "127.0.0.1", true, false},
		{"0", "0.0.0.0", true, false},
		{"0x", "0.0.0.0", true, false},
		{"169.254.43518", "169.254.169.254", true, false},
		{"0xa9fea9fe", "169.254.169.254", true, false},
		{"127.0.0.1.", "127.0.0.1", true, false},
		{"%31%32%37.0.0.1", "127.0.0.1", true, false},
		{"１２７。０。０。１", "127.0.0.1", true, false},
		{"[::1]", "::1", true, false},
		{"::1", "::1", true, false},
		{"[::ffff:7f00:1]", "::ffff:127.0.0.1", true, false},
		{"[0:0:0:0:0:ffff:127.0.0.1]", "::ffff:127.0.0.1", true, false},
		{"256.0.0.1", "", false, true},
		{"1.2.3.4.5", "", false, true},
		{"127.0.0.0x100", "", false, true},
		{"08.0.0.1", "", false, true}, // 8 is not an octal digit
		{"4294967296", "", false, true},
		{"", "", false, true},
		{"a b", "", false, true},
		{"[fe80::1%25eth0]", "", false, true},
		{"example.com\\@evil", "", false, true},
		{"1.2.3.example", "1.2.3.example", false, false}, // a name, not an address
	} {
		host, ip, err := canonicalHost(c.in)
		switch {
		case c.bad && err == nil:
			t.Errorf("canonicalHost(%q) = %q, want an error", c.in, host)
		case !c.bad && err != nil:
			t.Errorf("canonicalHost(%q): %v", c.in, err)
		case !c.bad && (host != c.host || ip.IsValid() != c.ip):
			t.Errorf("canonicalHost(%q) = %q (ip %v), want %q (ip %v)", c.in, host, ip.IsValid(), c.host, c.ip)
		}
	}
}

// fakeResolver answers from a table, as the tests' DNS.
type fakeResolver map[string][]string

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	ss, ok := f[host]
	if !ok {
		return nil, fmt.Errorf("lookup %s: no such host", host)
	}
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

var testDNS = fakeResolver{
	"example.com":        {"93.184.215.14"},
	"www.example.com":    {"93.184.215.14"},
	"loopback.test":      {"127.0.0.1"},
	"rebind.example.com": {"93.184.215.14", "10.0.0.7"},
	"meta.example.com":   {"169.254.169.254"},
	"v6loop.example.com": {"::1"},
	"intranet.corp":      {"10.1.2.3"},
}

func denied(t *testing.T, err error, rule string) {
	t.Helper()
	var de *DeniedError
	if !errors.As(err, &de) || !errors.Is(err, ErrDenied) {
		t.Fatalf("want a denial by rule %s, got %v", rule, err)
	}
	if de.Rule != rule {
		t.Fatalf("denied by rule %s, want %s: %v", de.Rule, rule, err)
	}
	if !strings.Contains(err.Error(), "[rule "+rule+"]") {
		t.Fatalf("the message does not name the rule: %v", err)
	}
}

// The navigation guard's table of bad targets, without a browser.
func TestCheckURL(t *testing.T) {
	ctx := context.Background()
	strict := &Policy{AllowDomains: []string{"example.com", "*.example.com"}, Resolver: testDNS}
	anyDom := &Policy{AnyDomain: true, Resolver: testDNS}
	local := &Policy{AllowDomains: []string{"127.0.0.1", "localhost", "intranet.corp", "10.9.0.0/16"}, Resolver: testDNS}
	private := &Policy{AnyDomain: true, AllowPrivateNetworks: true, Resolver: testDNS}
	for _, c := range []struct {
		p    *Policy
		url  string
		rule string // "" allowed
	}{
		{strict, "https://example.com/", ""},
		{strict, "http://www.example.com/a?b", ""},
		{strict, "https://EXAMPLE.com./", ""},
		{strict, "https://evil.test/", RuleDomain},
		{strict, "https://example.com.evil.test/", RuleDomain},
		{strict, "https://notexample.com/", RuleDomain},
		{strict, "https://example.com@evil.test/", RuleDomain},
		{strict, "https://rebind.example.com/", RuleAddress},
		{strict, "https://meta.example.com/", RuleAddress},
		{strict, "https://v6loop.example.com/", RuleAddress},
		{strict, "file:///etc/passwd", RuleScheme},
		{strict, "javascript:alert(1)", RuleScheme},
		{strict, "JavaScript:alert(1)", RuleScheme},
		{strict, "data:text/html,<h1>hi</h1>", RuleScheme},
		{strict, "chrome://settings", RuleScheme},
		{strict, "ftp://example.com/", RuleScheme},
		{strict, "blob:https://example.com/uuid", RuleScheme},
		{strict, "//example.com/", RuleScheme},

		{anyDom, "https://example.com/", ""},
		{anyDom, "http://127.0.0.1/", RuleAddress},
		{anyDom, "http://[::1]/", RuleAddress},
		{anyDom, "http://0x7f000001/", RuleAddress},
		{anyDom, "http://2130706433/", RuleAddress},
		{anyDom, "http://0177.0.0.1/", RuleAddress},
		{anyDom, "http://127.1/", RuleAddress},
		{anyDom, "http://169.254.169.254/latest/meta-data/", RuleAddress},
		{anyDom, "http://[fd00:ec2::254]/", RuleAddress},
		{anyDom, "http://[::ffff:169.254.169.254]/", RuleAddress},
		{anyDom, "http://10.0.0.1/", RuleAddress},
		{anyDom, "http://192.168.0.1:8080/", RuleAddress},
		{anyDom, "http://100.64.0.1/", RuleAddress},
		{anyDom, "http://0.0.0.0:9339/", RuleAddress},
		{anyDom, "http://0/", RuleAddress},
		{anyDom, "http://[::]/", RuleAddress},
		{anyDom, "http://[::ffff:127.0.0.1]/", RuleAddress},
		{anyDom, "http://[64:ff9b::a9fe:a9fe]/", RuleAddress},
		{anyDom, "http://localhost:9339/", RuleAddress},
		{anyDom, "http://app.localhost/", RuleAddress},
		{anyDom, "http://loopback.test/", RuleAddress},
		{anyDom, "http://no-such-host.test/", RuleAddress},
		{anyDom, "http://256.1.1.1/", RuleScheme},

		{local, "http://127.0.0.1:8080/", ""},
		{local, "http://localhost:3000/", ""},
		{local, "http://intranet.corp/", ""},
		{local, "http://10.9.1.1/", ""},
		{local, "http://0x7f000001/", ""}, // the same address, however spelled
		{local, "http://127.0.0.2/", RuleDomain},
		{local, "http://10.8.0.1/", RuleDomain},
		{local, "http://[::1]/", RuleDomain},

		{private, "http://10.0.0.1/", ""},
		{private, "http://[::1]:8080/", ""},
		{private, "http://localhost/", ""},
		{private, "http://169.254.169.254/", RuleAddress}, // metadata stays closed
		{private, "http://0.0.0.0/", RuleAddress},
		{&Policy{AnyDomain: true, AllowDomains: []string{"169.254.169.254"}}, "http://169.254.169.254/", ""},
		{&Policy{}, "https://example.com/", RuleDomain},
		{&Policy{AllowDomains: []string{"*"}}, "https://example.com/", RuleConfig},
	} {
		err := c.p.CheckURL(ctx, c.url)
		if c.rule == "" {
			if err != nil {
				t.Errorf("%s: %v", c.url, err)
			}
			continue
		}
		var de *DeniedError
		if !errors.As(err, &de) || de.Rule != c.rule {
			t.Errorf("%s: want a denial by rule %s, got %v", c.url, c.rule, err)
		}
	}
	// Messages say what happened and who can change it.
	err := anyDom.CheckURL(ctx, "http://0x7f000001/")
	if err == nil || !strings.Contains(err.Error(), "0x7f000001 (that is 127.0.0.1) is a loopback address") {
		t.Errorf("odd spelling: %v", err)
	}
	err = anyDom.CheckURL(ctx, "http://loopback.test/")
	if err == nil || !strings.Contains(err.Error(), "loopback.test resolves to 127.0.0.1") {
		t.Errorf("a name that resolves to loopback: %v", err)
	}
	err = strict.CheckURL(ctx, "https://evil.test/")
	if err == nil || !strings.Contains(err.Error(), "--allow-domain evil.test") {
		t.Errorf("allowlist: %v", err)
	}
}

// The system's resolver: localhost resolves to loopback.
func TestCheckURLRealResolver(t *testing.T) {
	p := &Policy{AnyDomain: true}
	if err := p.checkAddress(context.Background(), "localhost.", "localhost.", netip.Addr{}); err == nil {
		t.Fatal("localhost. was allowed")
	}
	err := p.CheckURL(context.Background(), "http://localhost./")
	denied(t, err, RuleAddress)
}

func TestPatterns(t *testing.T) {
	for _, bad := range []string{"*", "", "https://example.com", "example.com:443", "ex*ample.com", "*.*.com", "a b"} {
		p := &Policy{AllowDomains: []string{bad}}
		if err := p.Validate(); err == nil {
			t.Errorf("pattern %q was accepted", bad)
		}
	}
	for _, good := range []string{"example.com", "*.example.com", "localhost", "127.0.0.1", "::1", "[::1]", "10.0.0.0/8", "fd00::/8", "EXAMPLE.com."} {
		p := &Policy{AllowDomains: []string{good}}
		if err := p.Validate(); err != nil {
			t.Errorf("pattern %q: %v", good, err)
		}
	}
	p := &Policy{AllowDomains: []string{"*.example.com"}, Resolver: testDNS}
	if err := p.CheckURL(context.Background(), "https://example.com/"); err == nil {
		t.Error("*.example.com allowed example.com itself")
	}
}

func act(kind page.Kind, op string) page.Action {
	return page.Action{Kind: kind, Op: op, Tab: "1", TargetID: "T1", URL: "https://example.com/page"}
}

func TestCheckAction(t *testing.T) {
	ctx := context.Background()
	base := func() *Policy {
		return &Policy{AllowDomains: []string{"example.com", "shop.example.com"}, Resolver: fakeResolver{
			"example.com": {"93.184.215.14"}, "shop.example.com": {"93.184.215.15"},
		}}
	}

	p := base()
	if err := p.CheckAction(ctx, act(page.KindRead, "snapshot")); err != nil {
		t.Fatal(err)
	}
	a := act(page.KindRead, "snapshot")
	a.URL = "https://other.test/"
	err := p.CheckAction(ctx, a)
	denied(t, err, RuleDomain)
	if !strings.Contains(err.Error(), "the tab shows a page the agent may not read") {
		t.Errorf("reading outside: %v", err)
	}
	a = act(page.KindNavigate, "navigate")
	a.URL = "https://other.test/" // leaving a page outside is fine
	a.Target = "https://example.com/"
	if err := p.CheckAction(ctx, a); err != nil {
		t.Errorf("navigating back inside: %v", err)
	}
	a.Target = ""
	a.Op = "back"
	denied(t, p.CheckAction(ctx, a), RuleDomain)
	a = act(page.KindRead, "snapshot")
	a.URL = "about:blank"
	if err := p.CheckAction(ctx, a); err != nil {
		t.Errorf("a blank tab: %v", err)
	}

	// Read-only mode.
	p = base()
	p.ReadOnly = true
	for _, a := range []page.Action{
		act(page.KindAct, "click"), act(page.KindAct, "type"), act(page.KindNavigate, "navigate"),
		act(page.KindUpload, "upload"), act(page.KindEval, "eval"), {Kind: page.KindAct, Op: "dialog", Text: "accept"},
	} {
		if a.Kind == page.KindNavigate {
			a.Target = "https://example.com/"
		}
		denied(t, p.CheckAction(ctx, a), RuleReadOnly)
	}
	for _, a := range []page.Action{act(page.KindRead, "snapshot"), act(page.KindRead, "scroll"), {Kind: page.KindAct, Op: "dialog", Text: "dismiss"}} {
		if err := p.CheckAction(ctx, a); err != nil {
			t.Errorf("read-only %s: %v", a.Op, err)
		}
	}

	// JavaScript.
	p = base()
	denied(t, p.CheckAction(ctx, act(page.KindEval, "eval")), RuleEval)
	p.AllowEval = true
	if err := p.CheckAction(ctx, act(page.KindEval, "eval")); err != nil {
		t.Error(err)
	}

	// Captures and uploads need directories.
	p = base()
	denied(t, p.CheckAction(ctx, act(page.KindCapture, "capture")), RuleDownload)
	up := act(page.KindUpload, "upload")
	up.Files = []string{"/etc/passwd"}
	denied(t, p.CheckAction(ctx, up), RuleUpload)
	dir := t.TempDir()
	p.DownloadDir = dir
	if err := p.CheckAction(ctx, act(page.KindCapture, "capture")); err != nil {
		t.Error(err)
	}
	inside := filepath.Join(dir, "a.txt")
	os.WriteFile(inside, []byte("a"), 0o600)
	os.Symlink("/etc/passwd", filepath.Join(dir, "link"))
	for _, f := range []string{"/etc/passwd", filepath.Join(dir, "..", "x"), filepath.Join(dir, "link")} {
		up.Files = []string{inside, f}
		denied(t, p.CheckAction(ctx, up), RuleUpload)
	}
	up.Files = []string{inside}
	if err := p.CheckAction(ctx, up); err != nil {
		t.Error(err)
	}

	// Confirmation on chosen domains.
	p = base()
	p.ConfirmDomains = []string{"shop.example.com"}
	var asked []string
	answer := false
	p.Confirm = func(ctx context.Context, a Action) (bool, error) {
		asked = append(asked, a.Describe())
		return answer, nil
	}
	buy := act(page.KindAct, "click")
	buy.URL = "https://shop.example.com/cart"
	buy.Element = &page.Element{Index: 3, Role: "button", Name: "Buy now"}
	err = p.CheckAction(ctx, buy)
	denied(t, err, RuleConfirm)
	if !strings.Contains(err.Error(), "the person declined") || len(asked) != 1 || !strings.Contains(asked[0], `click [3] button "Buy now" on https://shop.example.com/cart`) {
		t.Errorf("confirm: %v; asked %q", err, asked)
	}
	if err := p.CheckAction(ctx, act(page.KindAct, "click")); err != nil || len(asked) != 1 {
		t.Errorf("a click elsewhere asked the person: %v %q", err, asked)
	}
	look := buy
	look.Kind, look.Op = page.KindRead, "snapshot"
	if err := p.CheckAction(ctx, look); err != nil || len(asked) != 1 {
		t.Errorf("reading asked the person: %v %q", err, asked)
	}
	answer = true
	if err := p.CheckAction(ctx, buy); err != nil {
		t.Errorf("confirmed: %v", err)
	}
	p.Confirm = nil
	denied(t, p.CheckAction(ctx, buy), RuleConfirm)

	// Tabs the Page did not open must be shared.
	p = base()
	shared := []string{"T2"}
	p.SharedTabs = func(context.Context) ([]string, error) { return shared, nil }
	a = act(page.KindRead, "snapshot")
	a.Adopted = true
	err = p.CheckAction(ctx, a)
	denied(t, err, RuleSharedTabs)
	if !strings.Contains(err.Error(), "popup") {
		t.Errorf("shared tabs: %v", err)
	}
	shared = append(shared, "T1")
	if err := p.CheckAction(ctx, a); err != nil {
		t.Error(err)
	}
	a.Adopted = false
	shared = nil
	if err := p.CheckAction(ctx, a); err != nil {
		t.Errorf("a tab the Page opened: %v", err)
	}
}

func TestCheckRequest(t *testing.T) {
	p := &Policy{AllowDomains: []string{"127.0.0.1", "example.com"}, Resolver: testDNS}
	ctx := context.Background()
	if err := p.CheckRequest(ctx, page.Request{URL: "http://127.0.0.1:8080/", MainFrame: true}); err != nil {
		t.Error(err)
	}
	denied(t, p.CheckRequest(ctx, page.Request{URL: "http://10.0.0.1/", MainFrame: true, Redirect: true}), RuleDomain)
	// An iframe of another site is part of an allowed page; a private one
	// is not.
	if err := p.CheckRequest(ctx, page.Request{URL: "https://www.example.com/embed"}); err != nil {
		t.Error(err)
	}
	denied(t, p.CheckRequest(ctx, page.Request{URL: "http://10.0.0.1/"}), RuleAddress)
	if err := p.CheckRequest(ctx, page.Request{URL: "about:srcdoc"}); err != nil {
		t.Error(err)
	}
	denied(t, p.CheckRequest(ctx, page.Request{URL: "data:text/html,x", MainFrame: true}), RuleScheme)
}

func TestAuditAndBudget(t *testing.T) {
	var log bytes.Buffer
	p := &Policy{AllowDomains: []string{"example.com"}, Resolver: testDNS, Audit: &log, MaxPageText: 200}
	ctx := context.Background()
	password := "hunter2-correct-horse"

	// Typing a password: the text is not in the log, nor in the error.
	_, err := p.Call(ctx, "browser_type", []byte(`{"index": 2, "text": "`+password+`"}`), func(ctx context.Context) (page.Result, error) {
		a := act(page.KindAct, "type")
		a.Element = &page.Element{Index: 2, Role: "textbox", Type: "password", Name: "Password"}
		a.Text = password
		if err := p.CheckAction(ctx, a); err != nil {
			return page.Result{}, err
		}
		return page.Result{Text: "Error: could not type " + password, IsError: true}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Typing into a named text field keeps the text; a token-shaped value
	// in the URL is redacted.
	p.Call(ctx, "browser_type", []byte(`{"index": 1, "text": "red fox"}`), func(ctx context.Context) (page.Result, error) {
		a := act(page.KindAct, "type")
		a.URL = "https://example.com/?q=x&access_token=abc123&s=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig"
		a.Element = &page.Element{Index: 1, Role: "textbox", Name: "Prompt"}
		a.Text = "red fox"
		return page.Result{Text: "typed"}, p.CheckAction(ctx, a)
	})
	// A selector: the policy cannot see the field, so the text goes.
	p.Call(ctx, "browser_type", []byte(`{"selector": "#pw", "text": "`+password+`", "token": "t0k3n"}`), func(ctx context.Context) (page.Result, error) {
		a := act(page.KindAct, "type")
		a.Ref = page.Selector("#pw")
		a.Text = password
		return page.Result{Text: "typed"}, p.CheckAction(ctx, a)
	})
	// A denial.
	p.Call(ctx, "browser_navigate", []byte(`{"url": "http://10.0.0.1/"}`), func(ctx context.Context) (page.Result, error) {
		a := act(page.KindNavigate, "navigate")
		a.Target = "http://10.0.0.1/"
		err := p.CheckAction(ctx, a)
		return page.Result{Text: "Error: " + err.Error(), IsError: true}, nil
	})
	// The budget.
	long := "<page id=abc>\n" + strings.Repeat("word ", 100) + "\n</page id=abc>"
	res, _ := p.Call(ctx, "browser_read", nil, func(ctx context.Context) (page.Result, error) {
		return page.Result{Text: long}, p.CheckAction(ctx, act(page.KindRead, "read"))
	})
	if !strings.Contains(res.Text, "livetab cut this result at 200 of") || !strings.Contains(res.Text, "</page id=abc>") {
		t.Errorf("budget: %s", res.Text)
	}
	if c := p.Budget("<page id=abc>\nhi\n</page id=abc>"); strings.Contains(c, "cut") {
		t.Errorf("a short text was cut: %s", c)
	}
	p.MaxPageText = 15
	if c := p.Budget("0123456789<page id=abc>hi</page id=abc>"); !strings.HasPrefix(c, "0123456789\n(livetab cut") {
		t.Errorf("a cut inside the tag: %q", c)
	}

	text := log.String()
	if strings.Contains(text, password) || strings.Contains(text, "hunter2") {
		t.Fatalf("the audit log holds the password:\n%s", text)
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d audit lines, want 5:\n%s", len(lines), text)
	}
	var es []AuditEntry
	for _, l := range lines {
		var e AuditEntry
		if err := jsonv2.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		if e.Time.IsZero() || e.Tool == "" || e.DurationMS < 0 {
			t.Errorf("incomplete entry: %s", l)
		}
		es = append(es, e)
	}
	if e := es[0]; e.Decision != DecisionAllowed || e.Outcome != OutcomeError || e.Args["text"] != "[redacted, 21 characters]" || e.Tab != "1" || e.URL != "https://example.com/page" || !strings.Contains(e.Error, "[redacted]") {
		t.Errorf("password entry: %+v", e)
	}
	if e := es[1]; e.Args["text"] != "red fox" || strings.Contains(e.URL, "abc123") || strings.Contains(e.URL, "eyJ") || !strings.Contains(e.URL, "q=x") {
		t.Errorf("text entry: %+v", e)
	}
	if e := es[2]; e.Args["text"] != "[redacted, 21 characters]" || e.Args["token"] != "[redacted]" {
		t.Errorf("selector entry: %+v", e)
	}
	if e := es[3]; e.Decision != DecisionDenied || e.Rule != RuleDomain || e.Outcome != OutcomeDenied || e.Target != "http://10.0.0.1/" {
		t.Errorf("denied entry: %+v", e)
	}
	if e := es[4]; e.Decision != DecisionAllowed || e.Outcome != OutcomeOK || e.Tool != "browser_read" {
		t.Errorf("read entry: %+v", e)
	}

	// A page action outside Call still leaves a line.
	log.Reset()
	p.CheckAction(ctx, act(page.KindEval, "eval"))
	var e AuditEntry
	if err := jsonv2.Unmarshal(bytes.TrimSpace(log.Bytes()), &e); err != nil || e.Tool != "page.eval" || e.Outcome != OutcomeDenied || e.Rule != RuleEval {
		t.Errorf("a check outside Call: %v %+v", err, e)
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"https://u:pw@example.com/x?password=a&b=c#access_token=z": "https://u:redacted@example.com/x?b=c&password=redacted#redacted",
		"https://example.com/reset?code=123456":                    "https://example.com/reset?code=redacted",
	} {
		if got := redactURL(in); got != want {
			t.Errorf("redactURL(%s) = %s, want %s", in, got, want)
		}
	}
	s := redactString("Authorization: Bearer abcdefghijklmnop and 0123456789abcdef0123456789abcdef01 but not aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")
	if strings.Contains(s, "abcdefghijklmnop") || strings.Contains(s, "0123456789abcdef") || !strings.Contains(s, "aaaaaaaa") {
		t.Errorf("redactString: %s", s)
	}
}

func TestConfig(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "policy.json")
	os.WriteFile(file, []byte(`{"allowDomains": ["example.com"], "readOnly": true, "downloadDir": "`+filepath.Join(dir, "dl")+`", "audit": "`+filepath.Join(dir, "audit", "log.jsonl")+`"}`), 0o600)

	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	f := RegisterFlags(fs)
	if err := fs.Parse([]string{"--config", file, "--allow-domain", "127.0.0.1", "--allow-domain=a.test,b.test", "--read-only=false", "--allow-eval"}); err != nil {
		t.Fatal(err)
	}
	c, err := f.Config()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.AllowDomains, " ") != "example.com 127.0.0.1 a.test b.test" || c.ReadOnly || !c.AllowEval || c.MaxPageText != DefaultMaxPageText {
		t.Errorf("config: %+v", c)
	}
	p, closer, err := c.Policy()
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	if fi, err := os.Stat(p.DownloadDir); err != nil || !fi.IsDir() {
		t.Errorf("download dir: %v", err)
	}
	p.CheckAction(context.Background(), act(page.KindEval, "eval"))
	if fi, err := os.Stat(filepath.Join(dir, "audit", "log.jsonl")); err != nil || fi.Size() == 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("audit file: %v %v", err, fi)
	}

	os.WriteFile(file, []byte(`{"allowDomain": ["example.com"]}`), 0o600)
	if _, err := LoadFile(file); err == nil || !strings.Contains(err.Error(), `unknown field "allowDomain"`) {
		t.Errorf("a typo: %v", err)
	}
	if _, _, err := (Config{AllowDomains: []string{"*"}}).Policy(); err == nil || !strings.Contains(err.Error(), "--any-domain") {
		t.Errorf("a * pattern: %v", err)
	}
}

func TestSensitive(t *testing.T) {
	for _, c := range []struct {
		a    page.Action
		want bool
	}{
		{page.Action{Op: "press", Text: "Enter"}, false},
		{page.Action{Op: "press", Text: "Control+A Backspace"}, false},
		{page.Action{Op: "press", Text: "Shift+Tab"}, false},
		{page.Action{Op: "press", Text: "h u n t e r 2"}, true},
		{page.Action{Op: "press", Text: "Shift+A"}, true},
		{page.Action{Op: "type", Text: "x"}, true},
		{page.Action{Op: "type", Text: "x", Element: &page.Element{Role: "textbox", Name: "Search"}}, false},
		{page.Action{Op: "type", Text: "x", Element: &page.Element{Role: "textbox", Type: "password"}}, true},
		{page.Action{Op: "type", Text: "x", Element: &page.Element{Role: "textbox", Name: "Your password"}}, true},
		{page.Action{Op: "click"}, false},
	} {
		if got := c.a.Sensitive(); got != c.want {
			t.Errorf("%+v: Sensitive() = %v", c.a, got)
		}
	}
}
