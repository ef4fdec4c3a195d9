package main

import (
	"context"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/livetab/livetab/internal/testsite"
)

// opener is a page that opens to in a new tab three ways.
func opener(to string) string {
	u, _ := url.Parse(to)
	inputs := `<input type="hidden" name="q" value="1">`
	for k, vs := range u.Query() {
		inputs += fmt.Sprintf(`<input type="hidden" name="%s" value="%s">`, k, html.EscapeString(vs[0]))
	}
	action := *u
	action.RawQuery = ""
	return fmt.Sprintf(`<!doctype html><title>opener</title>
<p><a target="_blank" href="%[1]s">open link</a></p>
<p><button onclick="window.open('%[1]s')">open window</button></p>
<form target="_blank" method="get" action="%[2]s">%[3]s<button>submit form</button></form>`, to, action.String(), inputs)
}

var popupButtons = []string{`link "open link"`, `button "open window"`, `button "submit form"`}

// Under `livetab mcp`, a page of the agent's tab cannot reach an address
// outside --allow-domain through a new tab, however it opens one, and the
// result of the click says so; a popup to an allowed address opens, the
// result names it, and the agent can use it.
func TestMCPPopups(t *testing.T) {
	s := needShared(t)
	forbidden := testsite.NewCounter(t, "127.0.0.2", "<title>forbidden</title>secret")
	allowed := testsite.NewCounter(t, "127.0.0.1", `<!doctype html><title>allowed</title><p>popup content</p>`)
	bad := testsite.NewCounter(t, "127.0.0.1", opener(forbidden.URL+"/x"))
	redirect := testsite.NewCounter(t, "127.0.0.1", opener(allowed.URL+"/r?to="+forbidden.URL+"/redirected"))
	good := testsite.NewCounter(t, "127.0.0.1", opener(allowed.URL+"/ok"))
	c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1")

	for _, page := range []*testsite.Counter{bad, redirect} {
		c.ok(t, "browser_navigate", map[string]any{"url": page.URL + "/"})
		snap, _ := c.ok(t, "browser_snapshot", nil)
		for _, b := range popupButtons {
			text, _ := c.ok(t, "browser_click", map[string]any{"index": index(t, snap, b)})
			if !strings.Contains(text, "blocked a popup") || !strings.Contains(text, "\n"+forbidden.URL+"/") || !strings.Contains(text, "outside the allowed domains") {
				t.Errorf("clicking %s: %s", b, text)
			}
		}
	}
	if n := forbidden.Hits.Load(); n != 0 {
		t.Fatalf("the forbidden server got %d requests through popups", n)
	}
	if n := allowed.Hits.Load(); n != 3 {
		t.Errorf("the allowed server got %d requests (the redirecting popups), want 3", n)
	}
	text, _ := c.ok(t, "browser_tabs", map[string]any{"action": "list"})
	if !strings.Contains(text, "1 tab(s)") {
		t.Errorf("blocked popups stayed open:\n%s", text)
	}

	c.ok(t, "browser_navigate", map[string]any{"url": good.URL + "/"})
	snap, _ := c.ok(t, "browser_snapshot", nil)
	opened := regexp.MustCompile(`opened a new tab (\d+) .*at:\n<page id=\w+>\n` + regexp.QuoteMeta(allowed.URL+"/ok"))
	var popup string
	for _, b := range popupButtons {
		text, _ := c.ok(t, "browser_click", map[string]any{"index": index(t, snap, b)})
		m := opened.FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("clicking %s: %s; want %s", b, text, opened)
		}
		popup = m[1]
	}
	c.ok(t, "browser_tabs", map[string]any{"action": "switch", "tab": popup})
	if text, _ := c.ok(t, "browser_read", nil); !strings.Contains(text, "popup content") {
		t.Fatalf("reading the popup: %s", text)
	}
	if n := allowed.Hits.Load(); n != 6 {
		t.Errorf("the allowed server got %d requests, want 6", n)
	}
}

// A policy ends with the agent that set it, even when the agent is killed
// and says no goodbye: another program on the same serve is free again.
func TestMCPPolicyEndsWithTheAgent(t *testing.T) {
	s := needShared(t)
	forbidden := testsite.NewCounter(t, "127.0.0.2", "<title>forbidden</title>secret")
	page := testsite.NewCounter(t, "127.0.0.1", opener(forbidden.URL+"/x"))
	c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1")
	c.ok(t, "browser_navigate", map[string]any{"url": page.URL + "/"})
	if err := c.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}

	actx, cancel := remote.NewAllocator(context.Background(), s.ep.URL)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	// Another domain than the agent's: the killed agent's policy does not
	// bind this program.
	elsewhere := strings.Replace(page.URL, "127.0.0.1", "localhost", 1)
	if err := chromedp.Do(ctx, chromedp.Navigate(elsewhere+"/elsewhere")); err != nil {
		t.Fatalf("another program is bound by the killed agent's policy: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(page.URL+"/")); err != nil {
		t.Fatal(err)
	}
	// The serve sees the agent's connection drop within a moment.
	deadline := time.Now().Add(10 * time.Second)
	for forbidden.Hits.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the killed agent's policy still blocks another program's popups")
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("a"))); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// With --any-domain, private addresses stay closed to popups too, but for
// a host --allow-domain names.
func TestMCPPopupsAnyDomain(t *testing.T) {
	s := needShared(t)
	forbidden := testsite.NewCounter(t, "127.0.0.2", "<title>forbidden</title>secret")
	page := testsite.NewCounter(t, "127.0.0.1", opener(forbidden.URL+"/x"))
	c := startMCP(t, s.home, nil, "--any-domain", "--allow-domain", "127.0.0.1")
	c.ok(t, "browser_navigate", map[string]any{"url": page.URL + "/"})
	snap, _ := c.ok(t, "browser_snapshot", nil)
	for _, b := range popupButtons {
		text, _ := c.ok(t, "browser_click", map[string]any{"index": index(t, snap, b)})
		if !strings.Contains(text, "blocked a popup") || !strings.Contains(text, "\n"+forbidden.URL+"/") || !strings.Contains(text, "[rule private-network]") {
			t.Errorf("clicking %s: %s", b, text)
		}
	}
	if n := forbidden.Hits.Load(); n != 0 {
		t.Fatalf("the private address got %d requests through popups", n)
	}
}
