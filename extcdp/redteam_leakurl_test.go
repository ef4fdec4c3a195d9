package extcdp_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/livetabcdp"
)

// leaksOf lists what mentions secret in everything a raw client received:
// events and the given replies.
func leaksOf(a *rawClient, secret string, replies ...string) []string {
	var out []string
	for _, r := range replies {
		if strings.Contains(r, secret) {
			out = append(out, "reply: "+fmt.Sprintf("%.300s", r))
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, e := range a.events {
		if strings.Contains(string(e.Params), secret) {
			out = append(out, e.Method+": "+fmt.Sprintf("%.300s", e.Params))
		}
	}
	return out
}

// The person's tab was at a page outside A's domains (its URL carries a
// token), then went to one inside them. A, held to 127.0.0.1, attaches and
// reads the tab's history.
func TestRedTeamHistoryTellsNoURLOutside(t *testing.T) {
	const secret = "history-token-77a1"
	person := userTab(t, site.CrossURL+"/form?"+secret)
	closeUserTab(t, person)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	u, err := env.User(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		v, err := u.Eval(ctx, person, `location.href.includes("`+secret+`") && document.readyState === "complete"`)
		if err == nil && string(v) == "true" {
			break
		}
		if i == 100 {
			t.Fatalf("not loaded: %s %v", v, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	u.Eval(ctx, person, `setTimeout(() => { location.href = "`+site.URL+`/form?allowed" }, 0), 1`)
	time.Sleep(1500 * time.Millisecond)
	u.Close()

	a := dialRaw(t)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}})
	var sid string
	for i := 0; ; i++ {
		if i == 50 {
			t.Fatal("could not attach at the allowed page")
		}
		res, err := a.call("", "Target.attachToTarget", map[string]any{"targetId": person, "flatten": true})
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		sid = field(res, "sessionId")
		if at, err := a.call(sid, "Runtime.evaluate", map[string]any{"expression": "location.href", "returnByValue": true}); err == nil && strings.Contains(string(at), "allowed") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	m, err := a.send(sid, "Page.getNavigationHistory", nil)
	if err != nil {
		t.Fatal(err)
	}
	out := string(m.Result)
	if m.Error != nil {
		out = m.Error.Message
	}
	if l := leaksOf(a, secret, out); len(l) > 0 {
		t.Errorf("A, held to 127.0.0.1, learned the URL of the person's earlier page outside its domains: %q", l)
	}
}

// A, held to 127.0.0.1, is on the person's tab at 127.0.0.1 with the
// domains a client turns on; B (no policy) makes the page do something
// with a URL outside A's domains.
func TestRedTeamPageActsTellNoURLOutside(t *testing.T) {
	for _, how := range []string{"window.open", "form-target-blank"} {
		t.Run(how, func(t *testing.T) {
			secret := "act-token-" + strings.ReplaceAll(how, ".", "")
			out := site.CrossURL
			person := userTab(t, site.URL+"/form?acts")
			closeUserTab(t, person)
			a := dialRaw(t)
			a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}})
			a.must("", "Target.setDiscoverTargets", map[string]any{"discover": true})
			a.call("", "Browser.setDownloadBehavior", map[string]any{"behavior": "default", "eventsEnabled": true})
			sa := a.attach(person)
			for _, d := range []string{"Page.enable", "Network.enable", "Runtime.enable", "Log.enable", "Audits.enable", "DOM.enable"} {
				a.call(sa, d, nil)
			}
			a.call(sa, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
			a.eval(sa, "1")
			b := dialRaw(t)
			sb := b.attach(person)
			b.eval(sb, "1")
			time.Sleep(500 * time.Millisecond)
			var expr string
			switch how {
			case "window.open":
				expr = fmt.Sprintf(`window.open(%q), 1`, out+"/form?"+secret)
			case "form-target-blank":
				expr = fmt.Sprintf(`(() => { const f = document.createElement('form'); f.action = %q; f.target = '_blank'; f.method = 'get'; const i = document.createElement('input'); i.name = 'q'; i.value = %q; f.append(i); document.body.append(f); f.submit(); return 1 })()`, out+"/form", secret)
			}
			b.eval(sb, expr)
			time.Sleep(2500 * time.Millisecond)
			tg, _ := a.call("", "Target.getTargets", nil)
			if l := leaksOf(a, secret, string(tg)); len(l) > 0 {
				t.Errorf("%s: A held to 127.0.0.1 learned a URL outside its domains: %q", how, l)
			}
		})
	}
}
