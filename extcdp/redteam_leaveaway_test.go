package extcdp_test

import (
	"strings"
	"testing"
	"time"
)

// TestRedTeamLeavesWhileWorkerAway: client A, on a tab the person opened
// and client B keeps using, sets a time zone, a script for new documents
// and an interception of every request, then leaves while the extension's
// service worker is stopped. The debugger outlives the worker and B holds
// the attachment, so what A set stays unless the relay takes it back;
// taken back while no extension listened, it was lost.
func TestRedTeamLeavesWhileWorkerAway(t *testing.T) {
	srv, tok := endpoint(t)
	id := userTab(t, site.URL+"/form?leave-away")
	closeUserTab(t, id)
	a, b := dialRawTo(t, srv, tok), dialRawTo(t, srv, tok)
	sa, sb := a.attach(id), b.attach(id)
	a.eval(sa, "1")
	zone := b.eval(sb, "Intl.DateTimeFormat().resolvedOptions().timeZone")
	a.must(sa, "Page.enable", nil)
	a.must(sa, "Emulation.setTimezoneOverride", map[string]any{"timezoneId": "Pacific/Fiji"})
	a.must(sa, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "window.leftBehind = 1"})
	a.must(sa, "Fetch.enable", map[string]any{"patterns": []any{map[string]any{"urlPattern": "*"}}})
	u := stopWorker(t)
	for env.Bridge.Connected() {
		time.Sleep(10 * time.Millisecond)
	}
	a.ws.CloseNow()
	time.Sleep(300 * time.Millisecond) // the relay has seen A leave
	wakeWorker(t, u)
	time.Sleep(300 * time.Millisecond) // the hello reached the relay
	b.bound = 5 * time.Second
	var left []string
	read := func(expr string) string {
		v, err := b.evalJSON(sb, expr)
		if err != nil {
			return "(" + err.Error() + ")"
		}
		return v
	}
	if _, err := b.call(sb, "Page.navigate", map[string]any{"url": site.URL + "/form?leave-away-after"}); err != nil {
		left = append(left, "B's navigation: "+err.Error())
	}
	got := ""
	for range 40 {
		if got = read("location.search + ' ' + document.readyState"); got == `"?leave-away-after complete"` || strings.HasPrefix(got, "(") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got != `"?leave-away-after complete"` {
		left = append(left, "the person's page did not load (its requests held?): "+got)
	} else if got := read("String(window.leftBehind)"); got != `"undefined"` {
		left = append(left, "A's script ran in the new document")
	}
	if got := read("Intl.DateTimeFormat().resolvedOptions().timeZone"); got != `"`+zone+`"` {
		left = append(left, "time zone "+got+", was "+zone)
	}
	if b.hasEvent("Fetch.requestPaused", "leave-away") {
		left = append(left, "B, which intercepts nothing, was told of held requests")
	}
	if len(left) > 0 {
		t.Errorf("A left while the worker was away, and left on the person's tab: %s", strings.Join(left, "; "))
	}
}
