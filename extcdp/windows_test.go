package extcdp_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
)

type windowBounds struct {
	WindowID int64 `json:"windowId"`
	Bounds   struct {
		Left        int64  `json:"left"`
		Top         int64  `json:"top"`
		Width       int64  `json:"width"`
		Height      int64  `json:"height"`
		WindowState string `json:"windowState"`
	} `json:"bounds"`
}

// TestWindows: Browser.getWindowForTarget, getWindowBounds,
// setWindowBounds and setContentsSize, which Puppeteer's page.resize
// (chrome-devtools-mcp's resize_page) sends, were "wasn't found". A window
// of the client's own tabs is moved and sized as on Chrome; the person's
// window never changes: setWindowBounds is refused there, and
// setContentsSize on a page's session sizes the page instead, until the
// client leaves.
func TestWindows(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	u, err := env.User(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	personsWindow := func(targetID string) windowBounds {
		t.Helper()
		raw, err := u.Call(ctx, "Browser.getWindowForTarget", map[string]any{"targetId": targetID})
		if err != nil {
			t.Fatal(err)
		}
		var w windowBounds
		jsonv2.Unmarshal(raw, &w, wire.Options)
		return w
	}
	getWindow := func(c *rawClient, sid string) windowBounds {
		t.Helper()
		var w windowBounds
		if err := jsonv2.Unmarshal(c.must(sid, "Browser.getWindowForTarget", nil), &w, wire.Options); err != nil {
			t.Fatal(err)
		}
		return w
	}

	// The person's tab, in the person's window.
	person := userTab(t, site.URL+"/form?windows")
	t.Cleanup(func() { u.CloseTab(context.Background(), person) })
	before := personsWindow(person)
	c := dialRaw(t)
	psid := c.attach(person)
	pw := getWindow(c, psid)
	if pw.WindowID != before.WindowID || pw.Bounds.Width != before.Bounds.Width || pw.Bounds.Height != before.Bounds.Height {
		t.Fatalf("the person's window through livetab: %+v; Chrome's own port says %+v", pw, before)
	}
	innerBefore := c.eval(psid, "innerWidth + 'x' + innerHeight")
	if _, err := c.call(psid, "Browser.setWindowBounds", map[string]any{"windowId": pw.WindowID, "bounds": map[string]any{"left": 10, "top": 10}}); err == nil || !strings.Contains(err.Error(), "person") {
		t.Errorf("moving the person's window: %v; want a refusal that names the person's tabs", err)
	}
	if _, err := c.call("", "Browser.setWindowBounds", map[string]any{"windowId": pw.WindowID, "bounds": map[string]any{"width": 500, "height": 400}}); err == nil || !strings.Contains(err.Error(), "person") {
		t.Errorf("sizing the person's window at the browser level: %v; want a refusal that names the person's tabs", err)
	}
	// On the page's session, as Playwright sizes each page's window: the
	// page gets what the window's frame would leave it.
	frameW, frameH := pw.Bounds.Width-int64(atoi(t, strings.Split(innerBefore, "x")[0])), pw.Bounds.Height-int64(atoi(t, strings.Split(innerBefore, "x")[1]))
	c.must(psid, "Browser.setWindowBounds", map[string]any{"windowId": pw.WindowID, "bounds": map[string]any{"width": 700, "height": 500}})
	if got, want := c.eval(psid, "innerWidth + 'x' + innerHeight"), fmt.Sprintf("%dx%d", 700-frameW, 500-frameH); got != want {
		t.Errorf("the page after setWindowBounds 700x500 on its session in the person's window: %s, want %s", got, want)
	}
	// Nothing to change: answered.
	c.must(psid, "Browser.setWindowBounds", map[string]any{"windowId": pw.WindowID, "bounds": map[string]any{"windowState": pw.Bounds.WindowState}})
	c.must(psid, "Browser.setContentsSize", map[string]any{"windowId": pw.WindowID, "width": 612, "height": 433})
	if got := c.eval(psid, "innerWidth + 'x' + innerHeight"); got != "612x433" {
		t.Errorf("the page after setContentsSize in the person's window: %s, want 612x433", got)
	}
	if after := personsWindow(person); after.Bounds != before.Bounds {
		t.Errorf("the person's window changed: %+v, was %+v", after.Bounds, before.Bounds)
	}
	var gb windowBounds
	jsonv2.Unmarshal(c.must("", "Browser.getWindowBounds", map[string]any{"windowId": pw.WindowID}), &gb, wire.Options)
	if gb.Bounds != pw.Bounds {
		t.Errorf("getWindowBounds: %+v, getWindowForTarget said %+v", gb.Bounds, pw.Bounds)
	}
	if _, err := c.call("", "Browser.getWindowBounds", map[string]any{"windowId": 987654}); err == nil {
		t.Error("getWindowBounds of no window answered")
	}

	// The client's own window.
	var ct struct {
		TargetID string `json:"targetId"`
	}
	jsonv2.Unmarshal(c.must("", "Target.createTarget", map[string]any{"url": site.URL + "/form?own-window", "newWindow": true}), &ct, wire.Options)
	sid := c.attach(ct.TargetID)
	w := getWindow(c, sid)
	if w.WindowID == pw.WindowID {
		t.Fatalf("newWindow: the tab is in the person's window %d", w.WindowID)
	}
	if real := personsWindow(ct.TargetID); real.WindowID != w.WindowID || real.Bounds != w.Bounds {
		t.Errorf("the client's window through livetab: %+v; Chrome's own port says %+v", w, real)
	}
	c.must(sid, "Browser.setWindowBounds", map[string]any{"windowId": w.WindowID, "bounds": map[string]any{"width": 901, "height": 702}})
	if real := personsWindow(ct.TargetID); real.Bounds.Width != 901 || real.Bounds.Height != 702 {
		t.Errorf("setWindowBounds 901x702 on the client's window: Chrome says %+v", real.Bounds)
	}
	c.must(sid, "Browser.setContentsSize", map[string]any{"windowId": w.WindowID, "width": 640, "height": 480})
	// The page hears of its window's new size a moment later, as on Chrome.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		got := c.eval(sid, "innerWidth + 'x' + innerHeight")
		if got == "640x480" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page after setContentsSize in the client's window: %s, want 640x480", got)
		}
	}

	// Gone: the person's page has its size back.
	c.ws.CloseNow()
	c2 := dialRaw(t)
	psid2 := c2.attach(person)
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := c2.eval(psid2, "innerWidth + 'x' + innerHeight")
		if got == innerBefore {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the person's page after the client left: %s, was %s", got, innerBefore)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
