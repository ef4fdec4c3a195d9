package extcdp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/coder/websocket"

	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/internal/fakeext"
	"github.com/livetab/livetab/internal/wire"
)

// Attacks of the red team on the shared endpoint (issue "trust"), against a
// fake extension: what is at stake here is the relay, not the browser.

const redToken = "red-token"

// fakeEndpoint serves a relay over a fake extension as `livetab serve`
// does, and returns the browser WebSocket URL with the token in it.
func fakeEndpoint(t *testing.T, opts extcdp.HandlerOptions, setup func(*fakeext.Ext)) (string, *extcdp.Relay, *httptest.Server) {
	t.Helper()
	r := relayOf(t, fakeBridgeWith(t, setup))
	opts.Token = redToken
	srv := httptest.NewServer(r.Handler(opts))
	t.Cleanup(srv.Close)
	return r.BrowserURL(strings.TrimPrefix(srv.URL, "http://"), redToken), r, srv
}

// A program that starts a large message and never finishes it must not
// hold up every other client's large messages (Playwright's setInputFiles
// sends files inline): messages over 1 MiB are read one at a time, so the
// one that holds the turn has to finish within a bound.
func TestRedTeamStalledLargeMessageHoldsUpNoOne(t *testing.T) {
	defer extcdp.SetBigReadTimeout(3 * time.Second)()
	u, _, _ := fakeEndpoint(t, extcdp.HandlerOptions{}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// The squatter on the turn: 2 MiB of a message, then nothing.
	slow, _, err := websocket.Dial(ctx, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.CloseNow()
	w, err := slow.Writer(ctx, websocket.MessageText)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte(`{"id":1,"method":"Browser.getVersion","params":{"pad":"` + strings.Repeat("x", 2<<20))); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the endpoint holds the turn now

	// An honest client with a 2 MiB command.
	b := dialRawURL(t, u)
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		_, err := b.call("", "Browser.getVersion", map[string]any{"pad": strings.Repeat("y", 2<<20)})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the honest client's large command failed: %v", err)
		}
		t.Logf("the honest client's 2 MiB command was answered after %v", time.Since(start).Round(time.Millisecond))
		// The staller was cut.
		if _, _, err := slow.Read(ctx); err == nil {
			t.Error("the client that stalled in a large message is still connected")
		}
	case <-time.After(90 * time.Second):
		t.Fatal("a client that stalls in the middle of a large message holds up every other client's large messages (no answer in 90 s)")
	}
}

// tabsFake is a fake extension whose createTab opens a new tab each time,
// listed by ext.targets from then on; tab 1 is the person's.
func tabsFake(e *fakeext.Ext) {
	var mu sync.Mutex
	tabs := []string{`{"tabId":1,"targetId":"T1","windowId":1,"url":"http://127.0.0.1/persons-tab","title":"","active":true,"attached":false}`}
	e.Handle(wire.Targets, func(*wire.Frame) (jsonv2.Value, *cdproto.Error) {
		mu.Lock()
		defer mu.Unlock()
		return jsonv2.Value(`{"targets":[` + strings.Join(tabs, ",") + `]}`), nil
	})
	e.Handle(wire.CreateTab, func(f *wire.Frame) (jsonv2.Value, *cdproto.Error) {
		var p wire.CreateTabParams
		jsonv2.Unmarshal(f.Params, &p, wire.Options)
		mu.Lock()
		defer mu.Unlock()
		n := len(tabs) + 1
		ti := fmt.Sprintf(`{"tabId":%d,"targetId":"T%d","windowId":1,"url":%q,"title":"title of T%d","active":false,"attached":false,"created":true}`, n, n, p.URL, n)
		tabs = append(tabs, ti)
		return jsonv2.Value(ti), nil
	})
	e.Handle(wire.Attach, func(f *wire.Frame) (jsonv2.Value, *cdproto.Error) {
		return jsonv2.Value(`{}`), nil
	})
}

// /livetab/status takes the same token as every client: it must not show
// one client the tabs of another, which the rest of the endpoint hides.
func TestRedTeamStatusHidesOtherClientsTabs(t *testing.T) {
	u, _, srv := fakeEndpoint(t, extcdp.HandlerOptions{}, tabsFake)
	a := dialRawURL(t, u)
	tA := field(a.must("", "Target.createTarget", map[string]any{"url": "http://127.0.0.1/secret-of-A"}), "targetId")
	resp, err := http.Get(srv.URL + "/livetab/status?token=" + redToken)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "persons-tab") {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	for _, s := range []string{tA, "secret-of-A", "title of " + tA} {
		if strings.Contains(string(body), s) {
			t.Errorf("/livetab/status shows %q of client A's tab to anyone with the token: %s", s, body)
		}
	}
}

// The extension's report of a new tab may reach the relay before its answer
// to createTarget, and without the mark that livetab made it (the worker
// reads that mark when it sends the report). The tab is then announced to
// everyone, and a client that auto-attaches gets a session on it; once the
// relay knows the tab is A's, that session must end and B must be told the
// target is gone.
func TestRedTeamEarlyTabReportGivesNoOneElseASession(t *testing.T) {
	u, _, _ := fakeEndpoint(t, extcdp.HandlerOptions{}, func(e *fakeext.Ext) {
		tabsFake(e)
		e.Handle(wire.CreateTab, func(f *wire.Frame) (jsonv2.Value, *cdproto.Error) {
			ti := `{"tabId":2,"targetId":"T2","windowId":1,"url":"http://127.0.0.1/secret-of-A","title":"","active":false,"attached":false}`
			ev, _ := wire.Encode(&wire.Frame{Method: wire.TabCreated, Params: jsonv2.Value(ti)})
			e.Send(context.Background(), websocket.MessageText, ev)
			time.Sleep(100 * time.Millisecond)
			return jsonv2.Value(strings.Replace(ti, `"attached":false`, `"attached":false,"created":true`, 1)), nil
		})
	})
	b := dialRawURL(t, u)
	b.must("", "Target.setDiscoverTargets", map[string]any{"discover": true})
	b.must("", "Target.setAutoAttach", map[string]any{"autoAttach": true, "flatten": true, "waitForDebuggerOnStart": false})
	a := dialRawURL(t, u)
	tA := field(a.must("", "Target.createTarget", map[string]any{"url": "http://127.0.0.1/secret-of-A"}), "targetId")
	time.Sleep(100 * time.Millisecond)

	var bSession string
	b.mu.Lock()
	for _, e := range b.events {
		if e.Method == "Target.attachedToTarget" && strings.Contains(string(e.Params), tA) {
			bSession = field(e.Params, "sessionId")
		}
	}
	b.mu.Unlock()
	if bSession == "" {
		t.Skip("the relay announced A's tab to no one: nothing to check")
	}
	if _, err := b.call(bSession, "Runtime.evaluate", map[string]any{"expression": "document.cookie"}); err == nil {
		t.Errorf("B keeps a session on A's tab %s: it was announced before A's createTarget answered", tA)
	}
	for _, info := range targetInfos(t, b) {
		if info.TargetID == tA {
			t.Errorf("B lists A's tab %s", tA)
		}
	}
	b.mu.Lock()
	destroyed := false
	for _, e := range b.events {
		if (e.Method == "Target.targetDestroyed" || e.Method == "Target.detachedFromTarget") && strings.Contains(string(e.Params), tA) {
			destroyed = true
		}
	}
	b.mu.Unlock()
	if !destroyed {
		t.Errorf("B heard of A's tab %s and was never told it is gone", tA)
	}
}

// 10,000 connections that each send a command, some leaving it unread, some
// dropping the socket without a close: serve is left with no goroutine and
// no memory of them.
func TestRedTeamConnectionsLeaveNothingBehind(t *testing.T) {
	u, r, _ := fakeEndpoint(t, extcdp.HandlerOptions{}, tabsFake)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	once := func(i int) {
		ws, _, err := websocket.Dial(ctx, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		ws.Write(ctx, websocket.MessageText, []byte(`{"id":1,"method":"Target.attachToBrowserTarget"}`))
		ws.Write(ctx, websocket.MessageText, []byte(`{"id":2,"method":"Target.setAutoAttach","params":{"autoAttach":true,"flatten":true}}`))
		switch i % 3 {
		case 0:
			ws.Read(ctx)
			ws.Close(websocket.StatusNormalClosure, "")
		case 1:
			ws.CloseNow()
		default:
			ws.Close(websocket.StatusGoingAway, "")
		}
	}
	for i := range 200 { // warm up: pools, the fake's tab list
		once(i)
	}
	settle := func() (int, uint64) {
		var g int
		for range 50 {
			time.Sleep(100 * time.Millisecond)
			if g = runtime.NumGoroutine(); r.Status().Clients == 0 && g < 200 {
				break
			}
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return runtime.NumGoroutine(), ms.HeapAlloc
	}
	g0, h0 := settle()
	n := 10000
	if testing.Short() {
		n = 1000
	}
	start := time.Now()
	for i := range n {
		once(i)
	}
	g1, h1 := settle()
	t.Logf("%d connections in %v: goroutines %d -> %d, heap %d KiB -> %d KiB, clients left %d", n, time.Since(start).Round(time.Millisecond), g0, g1, h0>>10, h1>>10, r.Status().Clients)
	if n := r.Counts(); n["sessions"] != 0 || n["tabSessions"] != 0 {
		t.Errorf("the relay holds sessions of clients that left: %v", n)
	}
	if c := r.Status().Clients; c != 0 {
		t.Errorf("%d clients left behind", c)
	}
	if g1 > g0+20 {
		buf := make([]byte, 1<<20)
		t.Errorf("goroutines grew from %d to %d:\n%s", g0, g1, buf[:runtime.Stack(buf, true)])
	}
	if h1 > h0+8<<20 {
		t.Errorf("heap grew from %d KiB to %d KiB", h0>>10, h1>>10)
	}
}

// A client with a browser session (Target.attachToBrowserTarget, as
// Puppeteer's and Playwright's connect may send) goes away: the relay goes
// on for everyone else.
func TestRedTeamBrowserSessionClientLeaves(t *testing.T) {
	u, _, _ := fakeEndpoint(t, extcdp.HandlerOptions{}, tabsFake)
	a := dialRawURL(t, u)
	a.must("", "Target.attachToBrowserTarget", nil)
	a.ws.Close(websocket.StatusNormalClosure, "")
	time.Sleep(200 * time.Millisecond)
	b := dialRawURL(t, u)
	if _, err := b.call("", "Target.getTargets", nil); err != nil {
		t.Fatalf("after a client with a browser session left, the relay answers no one: %v", err)
	}
}

// A client sends commands and drops its socket before they are done: what
// they make after the client's cleanup (sessions, a tab) must not outlive
// it. A session left behind keeps Chrome's debugging bar on the person's
// tab for good; a tab left behind stays open in the person's browser.
func TestRedTeamCommandsAfterLeavingLeaveNothing(t *testing.T) {
	var mu sync.Mutex
	closed := map[int64]bool{}
	u, r, _ := fakeEndpoint(t, extcdp.HandlerOptions{}, func(e *fakeext.Ext) {
		tabsFake(e)
		create := e.Handlers[wire.CreateTab]
		e.Handle(wire.CreateTab, func(f *wire.Frame) (jsonv2.Value, *cdproto.Error) {
			time.Sleep(300 * time.Millisecond)
			return create(f)
		})
		e.Handle(wire.CloseTab, func(f *wire.Frame) (jsonv2.Value, *cdproto.Error) {
			var p wire.TabParams
			jsonv2.Unmarshal(f.Params, &p, wire.Options)
			mu.Lock()
			closed[p.TabID] = true
			mu.Unlock()
			return nil, nil
		})
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 20 {
		ws, _, err := websocket.Dial(ctx, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			ws.Write(ctx, websocket.MessageText, []byte(`{"id":1,"method":"Target.createTarget","params":{"url":"http://127.0.0.1/left-behind"}}`))
		}
		ws.Write(ctx, websocket.MessageText, []byte(`{"id":2,"sessionId":"X","method":"Runtime.evaluate"}`))
		ws.Write(ctx, websocket.MessageText, []byte(`{"id":3,"method":"Target.attachToBrowserTarget"}`))
		ws.Write(ctx, websocket.MessageText, []byte(`{"id":4,"method":"Target.setAutoAttach","params":{"autoAttach":true,"flatten":true}}`))
		ws.Write(ctx, websocket.MessageText, []byte(`{"id":5,"method":"Target.attachToTarget","params":{"targetId":"T1","flatten":true}}`))
		ws.CloseNow()
	}
	time.Sleep(time.Second)
	n := r.Counts()
	if n["clients"] != 0 || n["sessions"] != 0 || n["tabSessions"] != 0 {
		t.Errorf("20 clients that left hold on: %v", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if !closed[2] {
		t.Errorf("the tab a client opened as it left is still open; the relay holds %v", n)
	}
}

// One client opens tens of thousands of sessions on the person's tab, then
// leaves: the others must not wait on the relay's lock meanwhile.
func TestRedTeamManySessionsStallNoOne(t *testing.T) {
	u, r, _ := fakeEndpoint(t, extcdp.HandlerOptions{}, tabsFake)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	a, _, err := websocket.Dial(ctx, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.CloseNow()
	a.SetReadLimit(-1)
	const n = 100000
	go func() {
		for i := 1; i <= n; i++ {
			if a.Write(ctx, websocket.MessageText, []byte(fmt.Sprintf(`{"id":%d,"method":"Target.attachToTarget","params":{"targetId":"T1","flatten":true}}`, i))) != nil {
				return
			}
		}
	}()
	got, refused := 0, 0
	for got < n {
		_, data, err := a.Read(ctx)
		if err != nil {
			t.Fatalf("after %d replies: %v", got, err)
		}
		if strings.Contains(string(data), `"id":`) {
			got++
		}
		if strings.Contains(string(data), "the most one client may") {
			refused++
		}
	}
	t.Logf("%d of %d attaches refused", refused, n)
	counts := r.Counts()
	t.Logf("the relay holds %v", counts)
	// The cap is what bounds the leave below (3.4 s alone without it, 250
	// ms with it): held exactly, since the time is only loosely bounded.
	if counts["sessions"] > 4096 {
		t.Errorf("one client holds %d sessions, past the cap of 4096", counts["sessions"])
	}
	b := dialRawURL(t, u)
	start := time.Now()
	a.CloseNow()
	var worst time.Duration
	for time.Since(start) < 3*time.Second {
		s := time.Now()
		if _, err := b.call("", "Target.getTargets", nil); err != nil {
			t.Fatal(err)
		}
		worst = max(worst, time.Since(s))
	}
	t.Logf("the worst getTargets of another client while a client with %d sessions left: %v; the relay holds %v", n, worst, r.Counts())
	// 250 ms alone; CI's run beside the other packages' browsers on 2
	// cores saw 1.4 s once.
	if worst > 2500*time.Millisecond {
		t.Errorf("a client with %d sessions held the relay for %v as it left", n, worst)
	}
}

// Many connections each start a message just under the size that waits for
// its turn, and never finish it: each costs serve the message so far, and
// nothing bounds how many there are.
func TestRedTeamManyHalfMessagesBoundMemory(t *testing.T) {
	u, _, _ := fakeEndpoint(t, extcdp.HandlerOptions{}, tabsFake)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	h0 := heap()
	const conns = 300
	pad := strings.Repeat("x", 1<<20-200)
	refused := 0
	for range conns {
		ws, resp, err := websocket.Dial(ctx, u, nil)
		if err != nil {
			if resp != nil && resp.StatusCode == http.StatusServiceUnavailable {
				refused++ // past HandlerOptions.MaxClients
				continue
			}
			t.Fatal(err)
		}
		defer ws.CloseNow()
		w, err := ws.Writer(ctx, websocket.MessageText)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(`{"id":1,"method":"Browser.getVersion","params":{"pad":"` + pad)); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(2 * time.Second)
	grew := int64(heap()-h0) >> 20
	t.Logf("%d connections (%d refused) with a half-sent message of 1 MiB: serve's heap grew by %d MiB", conns, refused, grew)
	if grew > 256 {
		t.Errorf("half-sent messages cost serve %d MiB: nothing bounds them", grew)
	}
}
