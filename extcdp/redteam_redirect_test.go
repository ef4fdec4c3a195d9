package extcdp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/internal/testsite"
	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamNavigateRedirectsOutside: a client held to its domains
// navigates (Page.navigate, Target.createTarget) to a URL of its domains
// that redirects outside them. The relay checks the URL it is given, and
// a navigation the client asks for is started by no page, which the
// extension's rules of page-started loads never matched: the redirected
// request went out, one each way, and once under load the client read the
// page (chrome.debugger's reply came before its event of the commit). The
// rules now hold every load outside the domains in the tabs the client
// opened: the outside server hears nothing.
func TestRedTeamNavigateRedirectsOutside(t *testing.T) {
	forbidden := testsite.NewCounter(t, "127.0.0.2", "<title>forbidden-secret</title>secret")
	allowed := testsite.NewCounter(t, "127.0.0.1", "<title>allowed</title>ok")
	srv, tok := endpoint(t)
	for _, how := range []string{"Page.navigate", "Target.createTarget"} {
		before := forbidden.Hits.Load()
		a := dialRawTo(t, srv, tok)
		a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}})
		to := allowed.URL + "/r?to=" + forbidden.URL + "/" + how
		var sid string
		if how == "Page.navigate" {
			_, sid = a.open(allowed.URL + "/start")
			a.must(sid, "Page.enable", nil)
			res, err := a.call(sid, "Page.navigate", map[string]any{"url": to})
			t.Logf("%s: %s %v", how, res, err)
		} else {
			res, err := a.call("", "Target.createTarget", map[string]any{"url": to})
			t.Logf("%s: %s %v", how, res, err)
			if err == nil {
				r, err := a.call("", "Target.attachToTarget", map[string]any{"targetId": field(res, "targetId"), "flatten": true})
				t.Logf("attach: %s %v", r, err)
				if err == nil {
					sid = field(r, "sessionId")
				}
			}
		}
		read := ""
		for range 60 {
			if sid == "" {
				break
			}
			m, err := a.send(sid, "Runtime.evaluate", map[string]any{"expression": "location.href + ' ' + document.title", "returnByValue": true})
			if err != nil || m.Error != nil {
				break
			}
			if strings.Contains(string(m.Result), "forbidden-secret") {
				read = string(m.Result)
				break
			}
			time.Sleep(25 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond)
		if n := forbidden.Hits.Load() - before; n != 0 {
			t.Errorf("%s: the server outside the domains had %d requests", how, n)
		}
		if read != "" {
			t.Errorf("%s: a client held to 127.0.0.1 read the page its allowed URL redirected to: %s", how, read)
		}
	}
}
