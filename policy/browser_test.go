package policy_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/internal/browsertest"
	"github.com/livetab/livetab/page"
	"github.com/livetab/livetab/policy"
)

// backends starts the plain headless Chromium of these tests on first use.
var backends browsertest.Backends

func TestMain(m *testing.M) {
	code := m.Run()
	backends.Close()
	os.Exit(code)
}

// newTab opens a tab; without Chromium it fails under CI and skips
// elsewhere.
func newTab(t *testing.T) context.Context { return backends.ExecTab(t) }

// sites are the test servers: the site on 127.0.0.1 and another server on
// 127.0.0.2, a private address that must never be reached.
type sites struct {
	site    *httptest.Server
	orders  atomic.Int32 // POSTs of the site's order form
	private *httptest.Server
	hits    atomic.Int32 // requests that reached the private server
}

const formPage = `<!doctype html><html><head><meta charset="utf-8"><title>Shop</title></head><body>
<form method="post" action="/order">
  <input name="item" aria-label="Item">
  <input type="password" name="pw" aria-label="Password">
  <button>Buy now</button>
</form>
<button id="count" onclick="out.textContent = ++window.clicks">Count</button>
<p id="out">0</p>
<a id="leave" href="%s/hit">Leave</a>
<script>window.clicks = 0</script>
</body></html>`

func newSites(t *testing.T) *sites {
	t.Helper()
	s := &sites{}
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatalf("listening on 127.0.0.2 (Linux routes 127/8 to lo): %v", err)
	}
	s.private = &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		fmt.Fprint(w, "<title>private</title>reached")
	})}}
	s.private.Start()
	t.Cleanup(s.private.Close)
	mux := http.NewServeMux()
	mux.HandleFunc("/form", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, formPage, s.private.URL)
	})
	mux.HandleFunc("POST /order", func(w http.ResponseWriter, r *http.Request) {
		s.orders.Add(1)
		fmt.Fprint(w, "<title>Ordered</title>ordered")
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	})
	s.site = httptest.NewServer(mux)
	t.Cleanup(s.site.Close)
	return s
}

// switchGuard lets a test load its page under one policy and then try the
// action under test under another.
type switchGuard struct{ cur atomic.Pointer[policy.Policy] }

func (g *switchGuard) CheckAction(ctx context.Context, a page.Action) error {
	return g.cur.Load().CheckAction(ctx, a)
}

func (g *switchGuard) CheckRequest(ctx context.Context, r page.Request) error {
	return g.cur.Load().CheckRequest(ctx, r)
}

// local allows the test site only.
func local() *policy.Policy {
	return &policy.Policy{AllowDomains: []string{"127.0.0.1"}}
}

type env struct {
	*sites
	p   *page.Page
	tab context.Context // the tab itself, outside the guard, to look at it
	ctx context.Context
	g   *switchGuard
}

// open loads the shop's form under the local policy, takes a snapshot,
// and puts pol in charge.
func open(t *testing.T, pol *policy.Policy) *env {
	t.Helper()
	e := &env{sites: newSites(t), tab: newTab(t), g: &switchGuard{}}
	e.g.cur.Store(local())
	var err error
	if e.p, err = page.New(e.tab, page.WithGuard(e.g)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.p.Close() })
	var cancel context.CancelFunc
	e.ctx, cancel = context.WithTimeout(context.Background(), 40*time.Second)
	t.Cleanup(cancel)
	if err := e.p.Navigate(e.ctx, e.site.URL+"/form"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.p.Snapshot(e.ctx, page.SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	e.g.cur.Store(pol)
	return e
}

// index finds an element of the tab's current snapshot by its text line.
func (e *env) index(t *testing.T, line string) string {
	t.Helper()
	e.g.cur.Load()
	res, err := e.p.Call(e.ctx, "browser_snapshot", nil)
	if err != nil || res.IsError {
		t.Fatalf("snapshot: %+v %v", res, err)
	}
	i := strings.Index(res.Text, line)
	if i < 0 {
		t.Fatalf("no %s in the snapshot:\n%s", line, res.Text)
	}
	head := res.Text[:i]
	return head[strings.LastIndex(head, "[")+1 : strings.LastIndex(head, "]")]
}

// untouched checks that the page and the servers saw nothing: the tab
// still shows the form, unclicked and empty, no order was placed and the
// private server was never reached.
func (e *env) untouched(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(e.tab, 10*time.Second)
	defer cancel()
	// One evaluation, not DOM queries: a page restored from the
	// back/forward cache leaves chromedp's view of the DOM behind.
	var st struct {
		Loc, Title, Out, Item string
	}
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[jsonv2.Value](`({Loc: location.href, Title: document.title,
			Out: document.querySelector('#out')?.textContent ?? '', Item: document.querySelector('input[name=item]')?.value ?? ''})`))
		if err != nil {
			return err
		}
		return jsonv2.Unmarshal(v, &st)
	}))
	if err != nil {
		t.Fatalf("looking at the tab: %v", err)
	}
	loc, title, out, item := st.Loc, st.Title, st.Out, st.Item
	if loc != e.site.URL+"/form" || title != "Shop" || out != "0" || item != "" {
		t.Errorf("the page changed: at %s %q, count %q, item %q", loc, title, out, item)
	}
	if n := e.orders.Load(); n != 0 {
		t.Errorf("%d orders reached the site", n)
	}
	if n := e.hits.Load(); n != 0 {
		t.Errorf("%d requests reached the private server", n)
	}
}

func wantDenied(t *testing.T, err error, rule string) {
	t.Helper()
	var de *policy.DeniedError
	if !errors.As(err, &de) || de.Rule != rule || !strings.Contains(err.Error(), "[rule "+rule+"]") {
		t.Fatalf("want a denial by rule %s, got %v", rule, err)
	}
}

// wantDeniedTool checks a tool result that reports a denial.
func wantDeniedTool(t *testing.T, res page.Result, err error, rule string) {
	t.Helper()
	if err != nil || !res.IsError || !strings.Contains(res.Text, "denied by livetab's policy [rule "+rule+"]") {
		t.Fatalf("want a tool error naming rule %s, got %+v %v", rule, res, err)
	}
}

// resolver is the test's DNS: loopback.test resolves to 127.0.0.1.
type resolver struct{}

func (resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if host == "loopback.test" {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, fmt.Errorf("lookup %s: no such host", host)
}

// The table of bad navigation targets: each is refused with the rule that
// refused it, and the page and both servers see nothing.
func TestBadTargets(t *testing.T) {
	anyDomain := &policy.Policy{AnyDomain: true, Resolver: resolver{}}
	e := open(t, anyDomain)
	port := e.site.Listener.Addr().(*net.TCPAddr).Port
	for _, c := range []struct {
		url  string
		rule string
	}{
		{fmt.Sprintf("http://127.0.0.1:%d/form", port), policy.RuleAddress},
		{fmt.Sprintf("http://[::1]:%d/", port), policy.RuleAddress},
		{fmt.Sprintf("http://0x7f000001:%d/form", port), policy.RuleAddress},
		{fmt.Sprintf("http://2130706433:%d/form", port), policy.RuleAddress},
		{fmt.Sprintf("http://0177.0.0.1:%d/form", port), policy.RuleAddress},
		{"http://169.254.169.254/latest/meta-data/", policy.RuleAddress},
		{"http://[fd00:ec2::254]/", policy.RuleAddress},
		{"http://10.0.0.1/", policy.RuleAddress},
		{fmt.Sprintf("http://loopback.test:%d/form", port), policy.RuleAddress},
		{fmt.Sprintf("http://localhost:%d/form", port), policy.RuleAddress},
		{e.private.URL + "/", policy.RuleAddress},
		{"file:///etc/passwd", policy.RuleScheme},
		{"javascript:document.title='pwned'", policy.RuleScheme},
		{"data:text/html,<title>pwned</title>", policy.RuleScheme},
	} {
		t.Run(c.url, func(t *testing.T) {
			wantDenied(t, e.p.Navigate(e.ctx, c.url), c.rule)
			res, err := e.p.Call(e.ctx, "browser_navigate", []byte(`{"url": `+quote(c.url)+`}`))
			wantDeniedTool(t, res, err, c.rule)
			e.untouched(t)
		})
	}
}

// A URL on an allowed host that redirects to a private address: the first
// hop is allowed, the redirect hop is blocked before the browser sends it.
func TestRedirectToPrivate(t *testing.T) {
	// The site's host is allowed by name; every other private address is
	// not.
	e := open(t, &policy.Policy{AnyDomain: true, AllowDomains: []string{"127.0.0.1"}})
	target := e.private.URL + "/hit"
	err := e.p.Navigate(e.ctx, e.site.URL+"/redirect?to="+url.QueryEscape(target))
	var be *page.BlockedError
	if !errors.As(err, &be) || be.URL != target {
		t.Fatalf("want the redirect hop to %s blocked, got %v", target, err)
	}
	wantDenied(t, err, policy.RuleAddress)
	if !strings.Contains(err.Error(), "127.0.0.2 is a loopback address") {
		t.Errorf("the reason: %v", err)
	}
	if n := e.hits.Load(); n != 0 {
		t.Errorf("%d requests reached the private server", n)
	}
	// The guard aborts a blocked navigation: the tab stays on the page it
	// was on, which the agent may read, rather than on an error page for
	// the blocked URL.
	snap, err := e.p.Snapshot(e.ctx, page.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(snap.URL, "127.0.0.2") {
		t.Errorf("the tab is at %s", snap.URL)
	}
	e.untouched(t)
}

// A host outside the allowlist: navigating there, following a link there,
// and reading a tab that shows it are all refused.
func TestOutsideAllowlist(t *testing.T) {
	e := open(t, local())
	wantDenied(t, e.p.Navigate(e.ctx, e.private.URL+"/"), policy.RuleDomain)
	e.untouched(t)

	// The click on an allowed page is allowed; the navigation it starts is
	// held and refused.
	res, err := e.p.Call(e.ctx, "browser_click", []byte(`{"selector": "#leave"}`))
	if err != nil || res.IsError || !strings.Contains(res.Text, "was blocked: denied by livetab's policy [rule allow-domain]") {
		t.Fatalf("a link to another host: %+v %v", res, err)
	}
	if n := e.hits.Load(); n != 0 {
		t.Fatalf("%d requests reached the other host", n)
	}

	// A tab that shows another host (it got there under a wider policy).
	e.g.cur.Store(&policy.Policy{AnyDomain: true, AllowPrivateNetworks: true})
	if err := e.p.Navigate(e.ctx, e.private.URL+"/"); err != nil {
		t.Fatal(err)
	}
	e.hits.Store(0)
	e.g.cur.Store(local())
	_, err = e.p.Snapshot(e.ctx, page.SnapshotOptions{})
	wantDenied(t, err, policy.RuleDomain)
	if !strings.Contains(err.Error(), "the tab shows a page the agent may not read") {
		t.Errorf("reading outside: %v", err)
	}
	res, err = e.p.Call(e.ctx, "browser_screenshot", nil)
	wantDeniedTool(t, res, err, policy.RuleDomain)
	if len(res.Image) != 0 {
		t.Error("a denied screenshot returned an image")
	}
}

// Read-only mode: looking works, clicking, typing, keys and navigating do
// not, and nothing reaches the page.
func TestReadOnly(t *testing.T) {
	e := open(t, &policy.Policy{AllowDomains: []string{"127.0.0.1"}, ReadOnly: true})
	count := e.index(t, `button "Count"`)
	item := e.index(t, `textbox "Item"`)
	for _, c := range []struct{ tool, args string }{
		{"browser_click", `{"index": ` + count + `}`},
		{"browser_click", `{"selector": "#count"}`},
		{"browser_type", `{"index": ` + item + `, "text": "fox"}`},
		{"browser_press", `{"keys": "Enter"}`},
		{"browser_check", `{"index": ` + count + `}`},
		{"browser_navigate", `{"url": "` + e.site.URL + `/form?again"}`},
		{"browser_navigate", `{"action": "reload"}`},
		{"browser_eval", `{"expression": "1"}`},
	} {
		res, err := e.p.Call(e.ctx, c.tool, []byte(c.args))
		wantDeniedTool(t, res, err, policy.RuleReadOnly)
	}
	wantDenied(t, e.p.Click(e.ctx, page.Selector("#count"), page.ClickOptions{}), policy.RuleReadOnly)
	wantDenied(t, e.p.Type(e.ctx, page.Selector("input[name=item]"), "fox", page.TypeOptions{}), policy.RuleReadOnly)
	for _, tool := range []string{"browser_snapshot", "browser_read", "browser_screenshot"} {
		if res, err := e.p.Call(e.ctx, tool, nil); err != nil || res.IsError {
			t.Errorf("%s in read-only mode: %+v %v", tool, res, err)
		}
	}
	e.untouched(t)
}

// JavaScript is off unless allowed.
func TestEvalDisabled(t *testing.T) {
	e := open(t, local())
	res, err := e.p.Call(e.ctx, "browser_eval", []byte(`{"expression": "document.title = 'pwned'; out.textContent = 'x'"}`))
	wantDeniedTool(t, res, err, policy.RuleEval)
	if !strings.Contains(res.Text, "--allow-eval") {
		t.Errorf("the denial does not say how to allow it: %s", res.Text)
	}
	_, err = e.p.Evaluate(e.ctx, "document.title = 'pwned'")
	wantDenied(t, err, policy.RuleEval)
	e.untouched(t)
}

// The confirmation hook says no: the order is not placed. Then yes.
func TestConfirmNo(t *testing.T) {
	var asked []page.Action
	answer := false
	pol := &policy.Policy{
		AllowDomains:   []string{"127.0.0.1"},
		ConfirmDomains: []string{"127.0.0.1"},
		Confirm: func(_ context.Context, a page.Action) (bool, error) {
			asked = append(asked, a)
			return answer, nil
		},
	}
	e := open(t, pol)
	buy := e.index(t, `button "Buy now"`)
	res, err := e.p.Call(e.ctx, "browser_click", []byte(`{"index": `+buy+`}`))
	wantDeniedTool(t, res, err, policy.RuleConfirm)
	if !strings.Contains(res.Text, "the person declined") {
		t.Errorf("the denial: %s", res.Text)
	}
	if len(asked) != 1 || asked[0].Element == nil || asked[0].Element.Name != "Buy now" || asked[0].URL != e.site.URL+"/form" {
		t.Fatalf("the hook was asked %+v", asked)
	}
	e.untouched(t)

	answer = true
	res, err = e.p.Call(e.ctx, "browser_click", []byte(`{"index": `+buy+`}`))
	if err != nil || res.IsError || e.orders.Load() != 1 {
		t.Fatalf("a confirmed click: %+v %v, %d orders", res, err, e.orders.Load())
	}
}

// The audit log of a short session, line by line; the typed password is
// not in it.
func TestAuditLog(t *testing.T) {
	var log bytes.Buffer
	pol := &policy.Policy{AllowDomains: []string{"127.0.0.1"}, Audit: &log, MaxPageText: 30000}
	e := open(t, pol)
	const password = "s3cret-Horse-battery"
	item := e.index(t, `textbox "Item"`)
	pw := e.index(t, `textbox "Password"`)
	log.Reset()
	for _, c := range []struct{ tool, args string }{
		{"browser_snapshot", `{}`},
		{"browser_type", `{"index": ` + item + `, "text": "red fox"}`},
		{"browser_type", `{"index": ` + pw + `, "text": "` + password + `"}`},
		{"browser_eval", `{"expression": "1+1"}`},
		{"browser_navigate", `{"url": "http://10.0.0.1/"}`},
		{"browser_click", `{"index": 999}`},
	} {
		if _, err := pol.PageCall(e.ctx, e.p, c.tool, []byte(c.args)); err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
	}
	if strings.Contains(log.String(), password) {
		t.Fatalf("the audit log holds the typed password:\n%s", log.String())
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	want := []struct{ tool, decision, outcome, rule, text string }{
		{"browser_snapshot", "allowed", "ok", "", ""},
		{"browser_type", "allowed", "ok", "", "red fox"},
		{"browser_type", "allowed", "ok", "", "[redacted, 20 characters]"},
		{"browser_eval", "denied", "denied", "allow-eval", ""},
		{"browser_navigate", "denied", "denied", "allow-domain", ""},
		{"browser_click", "allowed", "error", "", ""},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d audit lines, want %d:\n%s", len(lines), len(want), log.String())
	}
	for i, l := range lines {
		var got policy.AuditEntry
		if err := jsonv2.Unmarshal([]byte(l), &got); err != nil {
			t.Fatalf("line %d is not JSON: %v: %s", i+1, err, l)
		}
		w := want[i]
		if got.Tool != w.tool || got.Decision != w.decision || got.Outcome != w.outcome || got.Rule != w.rule {
			t.Errorf("line %d: %s", i+1, l)
		}
		if time.Since(got.Time) > time.Minute || got.DurationMS <= 0 || got.Tab != "1" {
			t.Errorf("line %d: time, duration or tab: %s", i+1, l)
		}
		if w.tool != "browser_navigate" && got.URL != e.site.URL+"/form" {
			t.Errorf("line %d: url %q", i+1, got.URL)
		}
		if w.text != "" && got.Args["text"] != w.text {
			t.Errorf("line %d: text %v, want %q", i+1, got.Args["text"], w.text)
		}
		if w.outcome != "ok" && got.Error == "" {
			t.Errorf("line %d: no error: %s", i+1, l)
		}
	}
}

func quote(s string) string {
	b, _ := jsonv2.Marshal(s)
	return string(b)
}
