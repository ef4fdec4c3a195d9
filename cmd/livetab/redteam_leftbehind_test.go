package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Attacks the end of an agent: its tabs, and the tabs their pages opened,
// must close with it (or at least stay held). A hostile page of an allowed
// host opens tabs in ways that cut or hide the link to its opener: a
// noopener window.open, a noreferrer link, a form aimed at _blank, a
// popup window of its own (not a tab of the agent's window), and a
// window.open from a frame of another allowed site (another process).
// Each opened page keeps asking, every 100 ms, the allowed 127.0.0.3 (to
// see whether it still runs) and the forbidden 127.0.0.2 (to see whether
// it is still held). The agent clicks each opener, then ends.
func TestRedTeamOpenedTabsEndWithTheAgent(t *testing.T) {
	s := needShared(t)
	forbidden := newRecorder(t, "127.0.0.2", func(string) string { return "secret" })
	var hostileURL string
	allowed := newRecorder(t, "127.0.0.3", func(path string) string {
		// The frame of another allowed site, which opens the tab.
		return fmt.Sprintf(`<!doctype html><title>frame</title><button onclick="window.open('%s/pop/xframe')">xframe</button>`, hostileURL)
	})
	ways := map[string]string{
		"noopener":   `<button onclick="window.open('/pop/noopener', '_blank', 'noopener')">noopener</button>`,
		"noreferrer": `<a href="/pop/noreferrer" target="_blank" rel="noreferrer noopener">noreferrer</a>`,
		"form":       `<form action="/pop/form" target="_blank"><button>form</button></form>`,
		"window":     `<button onclick="window.open('/pop/window', 'w', 'popup,width=300,height=300')">window</button>`,
	}
	labels := map[string]string{"noopener": `button "noopener"`, "noreferrer": `link "noreferrer"`, "form": `button "form"`, "window": `button "window"`}
	hostile := newRecorder(t, "127.0.0.1", func(path string) string {
		if v, ok := strings.CutPrefix(path, "/pop/"); ok {
			return fmt.Sprintf(`<!doctype html><title>%[3]s</title><script>setInterval(() => { `+
				`fetch('%[1]s/tick-%[3]s', {mode: 'no-cors'}).catch(() => {}); fetch('%[2]s/tick-%[3]s', {mode: 'no-cors'}).catch(() => {}) }, 100)</script>`,
				allowed.URL, forbidden.URL, v)
		}
		var b strings.Builder
		b.WriteString(`<!doctype html><title>hostile</title>`)
		for _, w := range ways {
			b.WriteString(w)
		}
		fmt.Fprintf(&b, `<iframe src="%s/frame" style="width:300px;height:60px"></iframe>`, allowed.URL)
		return b.String()
	})
	hostileURL = hostile.URL
	c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1", "--allow-domain", "127.0.0.3")
	c.ok(t, "browser_navigate", map[string]any{"url": hostile.URL + "/"})
	time.Sleep(300 * time.Millisecond)
	first := currentTab(t, c)
	var names []string
	for v, label := range labels {
		res := resultText(c.call(t, "browser_click", map[string]any{"index": index(t, mustSnap(t, c), label)}))
		t.Logf("%s: %s", v, res)
		c.ok(t, "browser_tabs", map[string]any{"action": "switch", "tab": first})
		names = append(names, v)
	}
	snap := mustSnap(t, c)
	if strings.Contains(snap, `button "xframe"`) {
		res := resultText(c.call(t, "browser_click", map[string]any{"index": index(t, snap, `button "xframe"`)}))
		t.Logf("xframe: %s", res)
		names = append(names, "xframe")
	} else {
		t.Logf("the frame's button is not in the snapshot:\n%s", snap)
	}
	time.Sleep(time.Second)
	for _, v := range names {
		if !allowed.hit("/tick-" + v) {
			t.Errorf("control %s: the opened tab never asked the allowed server: it did not open or run", v)
		}
	}
	if got := forbidden.paths(); len(got) > 0 {
		t.Errorf("while the agent ran, opened tabs reached %s: %v", forbidden.URL, got)
	}
	tabs, _ := c.ok(t, "browser_tabs", map[string]any{"action": "list"})
	t.Logf("tabs before the end:\n%s", tabs)
	c.Close()
	time.Sleep(2 * time.Second)
	count := func(r *recorder) map[string]int {
		r.mu.Lock()
		defer r.mu.Unlock()
		m := map[string]int{}
		for k, n := range r.hits {
			m[k] = n
		}
		return m
	}
	before := count(allowed)
	time.Sleep(2 * time.Second)
	after := count(allowed)
	for _, v := range names {
		if d := after["/tick-"+v] - before["/tick-"+v]; d > 0 {
			t.Errorf("%s: the tab the agent's page opened still runs 2 s after the agent ended (%d more requests)", v, d)
		}
	}
	if got := forbidden.paths(); len(got) > 0 {
		t.Errorf("after the agent ended, opened tabs reached %s: %v", forbidden.URL, got)
	}
}

// Attacks the moment an agent ends: the person's transient activation
// from the agent's click lasts seconds, and the page spends it later. The
// hostile page of an allowed host answers the click with a timer that
// opens a tab on the forbidden address (straight, as its first load) a
// moment later; the agent ends at once after its click. A tab opened
// after the relay let go of the agent's policy is no tab of the agent's:
// no rule holds it, and nothing closes it. The control: with the agent
// still running, the delayed popup toward the allowed 127.0.0.3 opens.
func TestRedTeamPopupAfterTheAgentEnds(t *testing.T) {
	s := needShared(t)
	forbidden := newRecorder(t, "127.0.0.2", func(path string) string {
		return `<!doctype html><title>late</title><script>setInterval(() => fetch('/tick' + location.pathname), 100)</script>`
	})
	allowed := newRecorder(t, "127.0.0.3", func(string) string { return "<!doctype html><title>late</title>" })
	hostile := newRecorder(t, "127.0.0.1", func(path string) string {
		to := toward(path, forbidden, allowed)
		d := path[strings.LastIndex(path, "/")+1:]
		return fmt.Sprintf(`<!doctype html><title>hostile</title><button onclick="setTimeout(() => window.open('%s/late-%s'), %s)">go</button>`, to, d, d)
	})
	c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1", "--allow-domain", "127.0.0.3")
	c.ok(t, "browser_navigate", map[string]any{"url": hostile.URL + "/ok/300"})
	c.ok(t, "browser_click", map[string]any{"index": index(t, mustSnap(t, c), `button "go"`)})
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end) && !allowed.hit("/late-300"); {
		time.Sleep(50 * time.Millisecond)
	}
	if !allowed.hit("/late-300") {
		t.Fatalf("control: the delayed popup never opened (%v)", allowed.paths())
	}
	c.Close()
	for _, d := range []int{100, 300, 600, 1200} {
		c := startMCP(t, s.home, nil, "--allow-domain", "127.0.0.1", "--allow-domain", "127.0.0.3")
		c.ok(t, "browser_navigate", map[string]any{"url": fmt.Sprintf("%s/%d", hostile.URL, d)})
		c.ok(t, "browser_click", map[string]any{"index": index(t, mustSnap(t, c), `button "go"`)})
		c.Close()
		time.Sleep(time.Duration(d)*time.Millisecond + 1500*time.Millisecond)
	}
	time.Sleep(time.Second)
	if got := forbidden.paths(); len(got) > 0 {
		forbidden.mu.Lock()
		t.Errorf("a tab the agent's page opened after the agent ended reached %s: %v", forbidden.URL, forbidden.hits)
		forbidden.mu.Unlock()
	}
}
