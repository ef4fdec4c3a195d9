package extcdp_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestRedTeamDiesMidSettingLeavesNothing: client A, on a tab the person
// opened and client B keeps using, sends commands that change the page
// (an emulated size, a time zone, a script for every new document) and
// drops its connection before their answers come, at once or a few
// milliseconds later. Chrome has one debugger attachment per tab, held by
// B: what A's commands set stays unless the relay takes it back, and a
// command of A that reaches the tab after A left is one the relay no
// longer knows to take back.
func TestRedTeamDiesMidSettingLeavesNothing(t *testing.T) {
	srv, tok := endpoint(t)
	id := userTab(t, site.URL+"/form?die-mid")
	closeUserTab(t, id)
	b := dialRawTo(t, srv, tok)
	sb := b.attach(id)
	width := b.eval(sb, "innerWidth")
	zone := b.eval(sb, "Intl.DateTimeFormat().resolvedOptions().timeZone")
	for i := range 24 {
		a := dialRawTo(t, srv, tok)
		sa := a.attach(id)
		a.must(sa, "Page.enable", nil)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		for _, cmd := range []string{
			`{"id":100,"sessionId":%q,"method":"Page.addScriptToEvaluateOnNewDocument","params":{"source":"window.leftBehind = (window.leftBehind || 0) + 1"}}`,
			`{"id":101,"sessionId":%q,"method":"Emulation.setDeviceMetricsOverride","params":{"width":321,"height":456,"deviceScaleFactor":1,"mobile":true}}`,
			`{"id":102,"sessionId":%q,"method":"Emulation.setTimezoneOverride","params":{"timezoneId":"Pacific/Fiji"}}`,
		} {
			if err := a.ws.Write(ctx, websocket.MessageText, []byte(fmt.Sprintf(cmd, sa))); err != nil {
				t.Fatal(err)
			}
		}
		cancel()
		time.Sleep(time.Duration(i%8) * time.Duration(i%8) * time.Millisecond)
		a.ws.CloseNow()
	}
	time.Sleep(time.Second) // what A sent has reached the tab
	b.must(sb, "Page.navigate", map[string]any{"url": site.URL + "/form?die-mid-after"})
	for b.eval(sb, "location.search") != "?die-mid-after" {
		time.Sleep(50 * time.Millisecond)
	}
	var left []string
	if got := b.eval(sb, "innerWidth"); got != width {
		left = append(left, "innerWidth "+got+", was "+width)
	}
	if got := b.eval(sb, "Intl.DateTimeFormat().resolvedOptions().timeZone"); got != zone {
		left = append(left, "time zone "+got+", was "+zone)
	}
	if got := b.eval(sb, "String(window.leftBehind)"); got != "undefined" {
		left = append(left, "a script of A ran "+got+" times in the new document")
	}
	if len(left) > 0 {
		t.Errorf("24 clients that left mid-command left on the person's tab: %s", strings.Join(left, "; "))
	}
}
