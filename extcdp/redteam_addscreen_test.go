package extcdp_test

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestRedTeamAddedScreenReachesThePersonsTab: a client adds a virtual
// screen (Emulation.addScreen) from a tab of its own, one that the browser
// window lies on, with a device pixel ratio of 100, and leaves. The screen
// is the browser's, not the tab's: the person's tab in that window renders
// at 100 device pixels per CSS pixel for good, after the client and its
// tab are gone; the person's own screenshot of it fails ("Unable to
// capture screenshot" after 10 s) and every client's is refused as too
// large. (Chrome documents the screen commands as headless only: the test
// browser is headless.)
func TestRedTeamAddedScreenReachesThePersonsTab(t *testing.T) {
	pid := userTab(t, site.URL+"/form?person-screen")
	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	t.Cleanup(func() { u.CloseTab(context.Background(), pid) })
	read := func() string {
		v, err := u.Eval(ctx, pid, "JSON.stringify([screen.width, screen.height, devicePixelRatio])")
		if err != nil {
			t.Fatalf("the person's tab: %v", err)
		}
		return string(v)
	}
	before := read()

	srv, tok := endpoint(t)
	c := dialRawTo(t, srv, tok)
	_, s := c.newTab(t, site.URL+"/form?own-screen")
	res, err := c.call(s, "Emulation.addScreen", map[string]any{"left": 0, "top": 0, "width": 200000, "height": 200000, "devicePixelRatio": 100})
	if err != nil {
		// Refused: so are the other screen commands, which change the
		// browser's screens as well.
		if !strings.Contains(err.Error(), "livetab refuses") {
			t.Fatalf("Emulation.addScreen: %v, want livetab's refusal", err)
		}
		for _, m := range []string{"Emulation.updateScreen", "Emulation.setPrimaryScreen", "Emulation.removeScreen"} {
			if _, err := c.call(s, m, map[string]any{"screenId": "1", "left": 0, "top": 0, "width": 10, "height": 10}); err == nil || !strings.Contains(err.Error(), "livetab refuses") {
				t.Errorf("%s: %v, want livetab's refusal", m, err)
			}
		}
		return
	}
	var added struct {
		ScreenInfo struct {
			ID string `json:"id"`
		} `json:"screenInfo"`
	}
	unmarshal(res, &added)
	t.Cleanup(func() {
		// Take the screen away through Chrome's own port, for the tests
		// that follow.
		at, err := u.Call(context.Background(), "Target.attachToTarget", map[string]any{"targetId": pid, "flatten": true})
		if err == nil {
			u.CallSession(context.Background(), field(at, "sessionId"), "Emulation.removeScreen", map[string]any{"screenId": added.ScreenInfo.ID})
		}
	})
	c.ws.CloseNow()
	<-c.closed
	time.Sleep(2 * time.Second) // its tab closes, the debugger leaves

	if after := read(); after != before {
		b := dialRawTo(t, srv, tok)
		sb := b.attach(pid)
		_, shotErr := b.call(sb, "Page.captureScreenshot", map[string]any{"format": "png"})
		msg := "<nil>"
		if shotErr != nil {
			msg = shotErr.Error()
			if i := strings.Index(msg, ":"); i > 0 && len(msg) > 160 {
				msg = msg[:160]
			}
		}
		t.Errorf("a client added a screen from its own tab and left; the person's tab reads [screen.width, screen.height, devicePixelRatio] %s, before the client came %s; a screenshot of it now: %s", after, before, msg)
	}
}
