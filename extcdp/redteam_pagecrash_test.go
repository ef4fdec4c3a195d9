package extcdp_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/livetab/livetab/internal/browsertest"
	"github.com/livetab/livetab/internal/wire"
)

// TestRedTeamCommandsThatEndATab: commands that Chrome's port would carry
// out and that, through the extension, end or wedge the person's tab.
// Page.crash kills the tab's renderer, which Chrome may share with other
// tabs of the person's (same site), and its reply never came (the client
// waited past 20 s); Page.close closed a tab the person opened; a CPU
// throttling rate of 1000 left the page answering nothing. Each is refused
// with an error that says why, at once, and the person's tab lives on and
// answers.
func TestRedTeamCommandsThatEndATab(t *testing.T) {
	if env == nil {
		t.Skip("no test browser")
	}
	ctx := context.Background()
	for _, tc := range []struct {
		method string
		params any
		want   string
	}{
		{"Page.crash", nil, "refuses Page.crash"},
		{"Page.close", nil, "tab the person opened"},
		{"Emulation.setCPUThrottlingRate", map[string]any{"rate": 1000}, "at most 20"},
	} {
		t.Run(tc.method, func(t *testing.T) {
			u, err := env.User(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer u.Close()
			id, err := u.OpenTab(ctx, site.URL+"/form")
			if err != nil {
				t.Fatal(err)
			}
			defer u.CloseTab(ctx, id)
			c := dialRaw(t)
			c.bound = 5 * time.Second
			sid := c.attach(id)
			m, err := c.send(sid, tc.method, tc.params)
			if err != nil {
				t.Fatalf("%s: %v", tc.method, err)
			}
			if m.Error == nil || !strings.Contains(m.Error.Message, tc.want) {
				t.Errorf("%s answered %+v, want an error saying %q", tc.method, m.Error, tc.want)
			}
			c.send("", "Target.detachFromTarget", map[string]any{"sessionId": sid})
			personsTabAnswers(t, u, id)
		})
	}
}

// personsTabAnswers fails t unless the person's tab id is open and its
// page evaluates.
func personsTabAnswers(t *testing.T, u *browsertest.User, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ts, err := u.Targets(ctx)
	if err != nil {
		t.Fatalf("the browser does not answer: %v", err)
	}
	if !slices.ContainsFunc(ts, func(ti browsertest.TargetInfo) bool { return ti.TargetID == id }) {
		t.Fatal("the person's tab is gone")
	}
	if v, err := u.Eval(ctx, id, "1+1"); err != nil || string(v) != "2" {
		t.Fatalf("the person's tab does not answer: %s %v", v, err)
	}
}

// TestPageCloseOwnTab: Page.close still closes a tab the client opened
// (Puppeteer's page.close({runBeforeUnload: true}) sends it), and is
// answered.
func TestPageCloseOwnTab(t *testing.T) {
	if env == nil {
		t.Skip("no test browser")
	}
	c := dialRaw(t)
	c.bound = 10 * time.Second
	id, sid := c.open(site.URL + "/form")
	m, err := c.send(sid, "Page.close", nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Error != nil && !strings.Contains(m.Error.Message, "closed") {
		t.Errorf("Page.close on its own tab: %s", m.Error.Message)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, open := pageTargets(t)[id]; !open {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the client's own tab is still open after Page.close")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestRedTeamCrashedTabAnswers: a tab's renderer dies (out of memory, a
// crash, the person's own DevTools). Through chrome.debugger, Chrome never
// answers the commands that were on their way, nor any sent after, until
// the page is reloaded: each waited for the relay's 5-minute bound. They
// must fail at once, saying the page crashed and how to bring it back, and
// a reload must bring it back. The client enabled no Inspector domain: the
// crash must be heard anyway.
func TestRedTeamCrashedTabAnswers(t *testing.T) {
	if env == nil {
		t.Skip("no test browser")
	}
	ctx := context.Background()
	u, err := env.User(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	c := dialRaw(t)
	c.bound = 10 * time.Second
	id, sid := c.open(site.URL + "/form")
	defer c.send("", "Target.closeTarget", map[string]any{"targetId": id})
	c.must(sid, "Runtime.enable", nil)

	pending := make(chan rawMsg, 1)
	go func() {
		m, err := c.send(sid, "Runtime.evaluate", map[string]any{"expression": "new Promise(() => {})", "awaitPromise": true})
		if err != nil {
			m.Error = &struct {
				Code    int64  `json:"code"`
				Message string `json:"message"`
			}{0, err.Error()}
		}
		pending <- m
	}()
	time.Sleep(500 * time.Millisecond)
	crashRenderer(t, u, id)

	m := <-pending
	if m.Error == nil || !strings.Contains(m.Error.Message, "crashed") {
		t.Errorf("the command on its way when the page crashed: %+v, want an error saying it crashed", m.Error)
	}
	m, err = c.send(sid, "Runtime.evaluate", map[string]any{"expression": "1+1"})
	if err != nil || m.Error == nil || !strings.Contains(m.Error.Message, "Page.reload") {
		t.Errorf("a command after the crash: %v %+v, want an error at once saying to reload", err, m.Error)
	}
	// Also one the relay reads the page for first (a screenshot's size, a
	// whole tree's count).
	c.bound = 3 * time.Second
	for _, method := range []string{"Page.captureScreenshot", "Accessibility.getFullAXTree"} {
		m, err = c.send(sid, method, nil)
		if err != nil || m.Error == nil || !strings.Contains(m.Error.Message, "Page.reload") {
			t.Errorf("%s after the crash: %v %+v, want an error at once saying to reload", method, err, m.Error)
		}
	}
	c.bound = 10 * time.Second
	c.must(sid, "Page.reload", nil)
	deadline := time.Now().Add(10 * time.Second)
	for {
		m, err := c.send(sid, "Runtime.evaluate", map[string]any{"expression": "1+1", "returnByValue": true})
		if err == nil && m.Error == nil && strings.Contains(string(m.Result), `"value":2`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after Page.reload the page does not answer: %v %+v", err, m.Error)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// crashRenderer kills the renderer of tab id through the test browser's
// own port, as an out-of-memory page or the person's DevTools would.
func crashRenderer(t *testing.T, u *browsertest.User, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := u.Call(ctx, "Target.attachToTarget", map[string]any{"targetId": id, "flatten": true})
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		SessionID string `json:"sessionId"`
	}
	jsonv2.Unmarshal(res, &a, wire.Options)
	// Chrome does not answer Page.crash: the renderer is gone.
	cctx, ccancel := context.WithTimeout(ctx, time.Second)
	defer ccancel()
	u.CallSession(cctx, a.SessionID, "Page.crash", nil)
}
