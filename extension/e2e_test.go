package extension

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/coder/websocket"
	"github.com/livetab/livetab/internal/wire"
)

const chromiumPath = "/usr/lib/chromium/chromium"

// requireChromium skips without Chromium, except on CI where a missing
// browser must fail the build.
func requireChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Chromium missing at %s: apt-get install chromium", chromiumPath)
		}
		t.Skipf("Chromium missing at %s: apt-get install chromium", chromiumPath)
	}
}

// fakeBridge is the smallest bridge: it accepts the extension's sockets and
// hands each to the test. It never answers ext.ping, so the runs are
// heartbeat-free.
type fakeBridge struct {
	url   string
	conns chan *extConn
	srv   *http.Server
}

func startBridge(t *testing.T) *fakeBridge {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &fakeBridge{url: "ws://" + ln.Addr().String() + "/extension", conns: make(chan *extConn, 8)}
	b.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: []string{ID}})
		if err != nil {
			return
		}
		c.SetReadLimit(64 << 20)
		ec := &extConn{c: c, origin: r.Header.Get("Origin"), path: r.URL.RequestURI(), port: ln.Addr().(*net.TCPAddr).Port,
			pending: map[int64]chan wire.Frame{}, events: make(chan wire.Frame, 4096), done: make(chan struct{})}
		b.conns <- ec
		ec.readLoop()
	})}
	go b.srv.Serve(ln)
	t.Cleanup(func() { b.srv.Close() })
	return b
}

// next waits for the extension's next socket.
func (b *fakeBridge) next(t *testing.T, d time.Duration) *extConn {
	t.Helper()
	select {
	case c := <-b.conns:
		return c
	case <-time.After(d):
		t.Fatalf("the extension did not connect within %v", d)
		return nil
	}
}

type extConn struct {
	c      *websocket.Conn
	origin string
	path   string
	port   int // the bridge's, which the proofs cover

	mu      sync.Mutex
	pending map[int64]chan wire.Frame
	nextID  atomic.Int64
	events  chan wire.Frame
	chunked atomic.Int64 // binary messages received
	rawMu   sync.Mutex
	raw     [][]byte     // every message received, as it came
	backlog []wire.Frame // events passed over, only touched by the test
	done    chan struct{}
	err     error
}

func (e *extConn) readLoop() {
	defer close(e.done)
	streams := map[uint32][]byte{}
	for {
		typ, b, err := e.c.Read(context.Background())
		if err != nil {
			e.err = err
			return
		}
		e.rawMu.Lock()
		e.raw = append(e.raw, b)
		e.rawMu.Unlock()
		if typ == websocket.MessageBinary {
			e.chunked.Add(1)
			stream := binary.BigEndian.Uint32(b[1:wire.ChunkHeader])
			streams[stream] = append(streams[stream], b[wire.ChunkHeader:]...)
			if b[0]&wire.ChunkLast == 0 {
				continue
			}
			b = streams[stream]
			delete(streams, stream)
		}
		var f wire.Frame
		if err := wire.Decode(b, &f); err != nil {
			e.err = err
			return
		}
		if f.ID != 0 && f.Method == "" {
			e.mu.Lock()
			ch := e.pending[f.ID]
			delete(e.pending, f.ID)
			e.mu.Unlock()
			if ch != nil {
				ch <- f
			}
			continue
		}
		select {
		case e.events <- f:
		default: // a test that does not read events does not block the socket
		}
	}
}

// write sends one frame, in chunks when it is large.
func (e *extConn) write(t *testing.T, f *wire.Frame) {
	t.Helper()
	b, err := wire.Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if len(b) <= wire.ChunkSize {
		err = e.c.Write(ctx, websocket.MessageText, b)
	} else {
		for off := 0; off < len(b) && err == nil; off += wire.ChunkSize {
			n := min(wire.ChunkSize, len(b)-off)
			msg := make([]byte, wire.ChunkHeader, wire.ChunkHeader+n)
			if off+n == len(b) {
				msg[0] = wire.ChunkLast
			}
			binary.BigEndian.PutUint32(msg[1:], 77)
			err = e.c.Write(ctx, websocket.MessageBinary, append(msg, b[off:off+n]...))
		}
	}
	if err != nil {
		t.Fatalf("writing %s: %v", f.Method, err)
	}
}

// start sends a request and returns where its reply will arrive.
func (e *extConn) start(t *testing.T, method string, tabID int64, params any) <-chan wire.Frame {
	t.Helper()
	f := &wire.Frame{ID: e.nextID.Add(1), Method: method, TabID: tabID}
	if params != nil {
		b, err := jsonv2.Marshal(params)
		if err != nil {
			t.Fatal(err)
		}
		f.Params = b
	}
	ch := make(chan wire.Frame, 1)
	e.mu.Lock()
	e.pending[f.ID] = ch
	e.mu.Unlock()
	e.write(t, f)
	return ch
}

func (e *extConn) wait(t *testing.T, method string, ch <-chan wire.Frame) wire.Frame {
	t.Helper()
	select {
	case f := <-ch:
		return f
	case <-e.done:
		t.Fatalf("%s: socket closed: %v", method, e.err)
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no reply", method)
	}
	return wire.Frame{}
}

// call sends a request and decodes the result into out; it fails the test
// on an error reply.
func (e *extConn) call(t *testing.T, method string, tabID int64, params, out any) {
	t.Helper()
	f := e.wait(t, method, e.start(t, method, tabID, params))
	if f.Error != nil {
		t.Fatalf("%s: error reply %d %s", method, f.Error.Code, f.Error.Message)
	}
	if out != nil {
		if err := jsonv2.Unmarshal(f.Result, out); err != nil {
			t.Fatalf("%s: result %s: %v", method, f.Result, err)
		}
	}
}

// callErr sends a request that must fail and returns its error.
func (e *extConn) callErr(t *testing.T, method string, tabID int64, params any) (int64, string) {
	t.Helper()
	f := e.wait(t, method, e.start(t, method, tabID, params))
	if f.Error == nil {
		t.Fatalf("%s: want an error, got result %s", method, f.Result)
	}
	return f.Error.Code, f.Error.Message
}

// event waits for an event that satisfies ok. Events it passes over stay
// for later calls: the order of, say, a tab's URL change and its load event
// is Chrome's business.
func (e *extConn) event(t *testing.T, method string, ok func(wire.Frame) bool) wire.Frame {
	t.Helper()
	match := func(f wire.Frame) bool { return f.Method == method && (ok == nil || ok(f)) }
	for i, f := range e.backlog {
		if match(f) {
			e.backlog = append(e.backlog[:i], e.backlog[i+1:]...)
			return f
		}
	}
	timeout := time.After(10 * time.Second)
	for {
		select {
		case f := <-e.events:
			if match(f) {
				return f
			}
			e.backlog = append(e.backlog, f)
		case <-e.done:
			t.Fatalf("waiting for %s: socket closed: %v", method, e.err)
		case <-timeout:
			t.Fatalf("no %s event", method)
		}
	}
}

// handshake reads the hello, checks what every hello must hold, proves
// that it holds the token, checks the extension's proof and welcomes it.
func (e *extConn) handshake(t *testing.T, token string) wire.HelloParams {
	t.Helper()
	f := e.event(t, wire.Hello, nil)
	var h wire.HelloParams
	if err := jsonv2.Unmarshal(f.Params, &h); err != nil {
		t.Fatalf("hello params %s: %v", f.Params, err)
	}
	if h.Token != "" || !wire.ValidNonce(h.Nonce) || h.ExtensionID != ID || h.Version != "0.1.0" || !strings.Contains(h.UserAgent, "Chrome/") {
		t.Errorf("hello = %+v, want no token, a nonce, id %s, version 0.1.0", h, ID)
	}
	if e.origin != Origin {
		t.Errorf("Origin header %q, want %q", e.origin, Origin)
	}
	nb := wire.NewNonce()
	ch, _ := jsonv2.Marshal(wire.ChallengeParams{Nonce: nb, Proof: wire.BridgeProof(token, e.port, h.Nonce, nb)})
	sent := time.Now()
	e.write(t, &wire.Frame{Method: wire.Challenge, Params: ch})
	pf := e.event(t, wire.Proof, nil)
	// What the pairing adds to a connection: the worker's HMAC check and
	// its own proof, one round trip.
	t.Logf("the extension's proof came %v after the challenge", time.Since(sent).Round(10*time.Microsecond))
	var p wire.ProofParams
	if err := jsonv2.Unmarshal(pf.Params, &p); err != nil || p.Proof != wire.ExtensionProof(token, e.port, h.Nonce, nb) {
		t.Fatalf("the extension's proof %s does not match token %q", pf.Params, token)
	}
	e.write(t, &wire.Frame{Method: wire.Welcome, Params: jsonv2.Value(`{"version":"0.1.0"}`)})
	return h
}

type evalResult struct {
	Result struct {
		Type  string       `json:"type"`
		Value jsonv2.Value `json:"value"`
	} `json:"result"`
	ExceptionDetails *struct {
		Text string `json:"text"`
	} `json:"exceptionDetails"`
}

func (e *extConn) eval(t *testing.T, tabID int64, expr string) string {
	t.Helper()
	var r evalResult
	e.call(t, "Runtime.evaluate", tabID, map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &r)
	if r.ExceptionDetails != nil {
		t.Fatalf("%s threw %s", expr, r.ExceptionDetails.Text)
	}
	return string(r.Result.Value)
}

// cdpClient talks to the browser's own debugging port, for what a test
// must do behind the extension's back.
type cdpClient struct {
	c  *websocket.Conn
	id int64
}

func dialCDP(t *testing.T, url string) *cdpClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(16 << 20)
	t.Cleanup(func() { c.CloseNow() })
	return &cdpClient{c: c}
}

func (c *cdpClient) call(t *testing.T, sessionID, method string, params, out any) {
	t.Helper()
	if msg := c.tryCall(t, sessionID, method, params, out); msg != "" {
		t.Fatalf("%s: %s", method, msg)
	}
}

// tryCall is call, returning Chrome's error message instead of failing.
func (c *cdpClient) tryCall(t *testing.T, sessionID, method string, params, out any) string {
	t.Helper()
	c.id++
	msg := map[string]any{"id": c.id, "method": method, "params": params}
	if params == nil {
		msg["params"] = map[string]any{}
	}
	if sessionID != "" {
		msg["sessionId"] = sessionID
	}
	b, err := jsonv2.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.c.Write(ctx, websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
	for {
		_, b, err := c.c.Read(ctx)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		var r struct {
			ID     int64        `json:"id"`
			Result jsonv2.Value `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := jsonv2.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		if r.ID != c.id {
			continue
		}
		if r.Error != nil {
			return r.Error.Message
		}
		if out != nil {
			if err := jsonv2.Unmarshal(r.Result, out); err != nil {
				t.Fatal(err)
			}
		}
		return ""
	}
}

// TestEndToEnd loads the real extension into headless Chromium and drives
// it through a fake bridge: handshake, every operation, CDP commands and
// events, large frames both ways, concurrency, a service-worker restart,
// settings from the popup's storage, and a refusal.
func TestEndToEnd(t *testing.T) {
	requireChromium(t)
	pages := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<!doctype html><title>page %s</title><p>hello</p>", r.URL.Path)
	}))
	defer pages.Close()

	br := startBridge(t)
	dir := t.TempDir()
	const token = "tok-1"
	if err := Write(dir, Config{URL: br.url, Token: token}); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	browser, err := Launch(ctx, dir, LaunchOptions{ExecPath: chromiumPath, Headless: true, DebugPort: true, Stderr: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := browser.Close(); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(browser.UserDataDir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("temporary profile %s left behind: %v", browser.UserDataDir, err)
		}
		if t.Failed() {
			t.Logf("chromium stderr:\n%s", stderr.String())
		}
	}()
	if !strings.HasPrefix(browser.DebugURL, "ws://127.0.0.1:") {
		t.Errorf("DebugURL = %q", browser.DebugURL)
	}

	ext := br.next(t, 15*time.Second)
	hello := ext.handshake(t, token)
	if len(hello.Attached) != 0 {
		t.Errorf("fresh browser: hello.attached = %v", hello.Attached)
	}

	var targets wire.TargetsResult
	ext.call(t, wire.Targets, 0, struct{}{}, &targets)
	if len(targets.Targets) == 0 || targets.Targets[0].TargetID == "" || targets.Targets[0].TabID == 0 {
		t.Fatalf("ext.targets = %+v", targets)
	}

	var files wire.FileAccessResult
	ext.call(t, wire.FileAccess, 0, struct{}{}, &files)
	if files.Allowed != hello.FileAccess {
		t.Errorf("ext.fileAccess %v, hello said %v", files.Allowed, hello.FileAccess)
	}

	var tab wire.TabInfo
	ext.call(t, wire.CreateTab, 0, wire.CreateTabParams{URL: pages.URL + "/one", Active: true}, &tab)
	if tab.TabID == 0 || tab.TargetID == "" || tab.Attached {
		t.Fatalf("ext.createTab = %+v", tab)
	}
	ext.event(t, wire.TabCreated, func(f wire.Frame) bool { return bytes.Contains(f.Params, fmt.Appendf(nil, `"tabId":%d,`, tab.TabID)) })

	var att wire.AttachResult
	ext.call(t, wire.Attach, 0, wire.TabParams{TabID: tab.TabID}, &att)
	if att.TargetID != tab.TargetID {
		t.Errorf("ext.attach targetId %q, createTab said %q", att.TargetID, tab.TargetID)
	}
	if got := ext.eval(t, tab.TabID, "1+1"); got != "2" {
		t.Errorf("1+1 = %s", got)
	}
	// Attaching again is what a restarted worker does: it must succeed.
	ext.call(t, wire.Attach, 0, wire.TabParams{TabID: tab.TabID}, &att)

	ext.call(t, wire.Targets, 0, struct{}{}, &targets)
	found := false
	for _, ti := range targets.Targets {
		if ti.TabID == tab.TabID {
			found = ti.Attached && ti.TargetID == tab.TargetID
		}
	}
	if !found {
		t.Errorf("ext.targets after attach: %+v", targets.Targets)
	}

	// Errors: the browser's own JSON errors keep their code.
	if code, msg := ext.callErr(t, "Target.getTargets", tab.TabID, struct{}{}); code != -32000 || msg != "Not allowed" {
		t.Errorf("Target.getTargets error %d %q", code, msg)
	}
	if code, msg := ext.callErr(t, "Browser.getVersion", tab.TabID, nil); code != -32601 {
		t.Errorf("Browser.getVersion error %d %q", code, msg)
	}
	if code, _ := ext.callErr(t, "ext.noSuchThing", 0, nil); code != -32601 {
		t.Errorf("unknown operation error code %d", code)
	}
	if _, msg := ext.callErr(t, "Runtime.evaluate", 0, map[string]any{"expression": "1"}); !strings.Contains(msg, "tabId") {
		t.Errorf("CDP without tabId: %q", msg)
	}

	// Events: a navigation's load event, and the tab's new URL.
	ext.call(t, "Page.enable", tab.TabID, nil, nil)
	ext.call(t, "Page.navigate", tab.TabID, map[string]any{"url": pages.URL + "/two"}, nil)
	ev := ext.event(t, "Page.loadEventFired", nil)
	if ev.TabID != tab.TabID || ev.SessionID != "" {
		t.Errorf("load event of tab %d session %q, want tab %d", ev.TabID, ev.SessionID, tab.TabID)
	}
	ext.event(t, wire.TabUpdated, func(f wire.Frame) bool { return bytes.Contains(f.Params, []byte(`/two"`)) })

	// Replies leave as commands finish, not in request order.
	slow := ext.start(t, "Runtime.evaluate", tab.TabID, map[string]any{
		"expression": "new Promise(r => setTimeout(() => r('slow'), 400))", "awaitPromise": true, "returnByValue": true})
	if got := ext.eval(t, tab.TabID, "'fast'"); got != `"fast"` {
		t.Errorf("fast = %s", got)
	}
	select {
	case <-slow:
		t.Error("the slow reply came before the fast one")
	default:
	}
	if f := ext.wait(t, "slow", slow); !bytes.Contains(f.Result, []byte(`"slow"`)) {
		t.Errorf("slow = %s", f.Result)
	}

	// Large frames both ways: a 1.2 MB result comes in chunks (cut inside
	// a rune), a 1.2 MB request goes out in chunks.
	before := ext.chunked.Load()
	big := ext.eval(t, tab.TabID, "'é'.repeat(600000)")
	if want := `"` + strings.Repeat("é", 600000) + `"`; big != want || ext.chunked.Load()-before != 2 {
		t.Errorf("big result: %d bytes in %d chunks", len(big), ext.chunked.Load()-before)
	}
	if got := ext.eval(t, tab.TabID, "'"+strings.Repeat("ab", 600000)+"'.length"); got != "1200000" {
		t.Errorf("chunked request: length %s", got)
	}

	ext.call(t, wire.ActivateTab, 0, wire.TabParams{TabID: tab.TabID}, nil)
	ext.call(t, wire.Detach, 0, wire.TabParams{TabID: tab.TabID}, nil)
	ext.call(t, wire.Detach, 0, wire.TabParams{TabID: tab.TabID}, nil)
	if _, msg := ext.callErr(t, "Runtime.evaluate", tab.TabID, map[string]any{"expression": "1"}); !strings.Contains(msg, "not attached") {
		t.Errorf("after detach: %q", msg)
	}
	var win wire.TabInfo
	ext.call(t, wire.CreateTab, 0, wire.CreateTabParams{URL: pages.URL + "/window", NewWindow: true}, &win)
	if win.WindowID == tab.WindowID || win.TargetID == "" {
		t.Errorf("new window's tab %+v, first tab's window %d", win, tab.WindowID)
	}
	ext.call(t, wire.CloseTab, 0, wire.TabParams{TabID: win.TabID}, nil)
	ext.call(t, wire.CloseTab, 0, wire.TabParams{TabID: tab.TabID}, nil)
	ext.event(t, wire.TabRemoved, func(f wire.Frame) bool { return string(f.Params) == fmt.Sprintf(`{"tabId":%d}`, tab.TabID) })

	t.Run("worker restart keeps attachments", func(t *testing.T) {
		workerRestart(t, browser, br, ext, token, pages.URL)
	})
	t.Run("popup", func(t *testing.T) { popupShowsStatus(t, browser) })
	t.Run("settings from storage", func(t *testing.T) { settingsFromStorage(t, browser, br) })
}

// workerRestart attaches a tab through the extension and another through
// the debugging port, stops the service worker, wakes it with a new tab
// and checks that the new hello claims exactly the extension's tab.
func workerRestart(t *testing.T, browser *Browser, br *fakeBridge, ext *extConn, token, pagesURL string) {
	var ours, theirs wire.TabInfo
	ext.call(t, wire.CreateTab, 0, wire.CreateTabParams{URL: pagesURL + "/ours", Active: true}, &ours)
	ext.call(t, wire.Attach, 0, wire.TabParams{TabID: ours.TabID}, nil)
	ext.call(t, wire.CreateTab, 0, wire.CreateTabParams{URL: pagesURL + "/theirs"}, &theirs)

	cdp := dialCDP(t, browser.DebugURL)
	cdp.call(t, "", "Target.attachToTarget", map[string]any{"targetId": theirs.TargetID, "flatten": true}, nil)

	var all struct {
		TargetInfos []struct {
			TargetID string `json:"targetId"`
			Type     string `json:"type"`
			URL      string `json:"url"`
		} `json:"targetInfos"`
	}
	cdp.call(t, "", "Target.getTargets", nil, &all)
	worker := ""
	for _, ti := range all.TargetInfos {
		if ti.Type == "service_worker" && strings.HasPrefix(ti.URL, Origin+"/") {
			worker = ti.TargetID
		}
	}
	if worker == "" {
		t.Fatalf("no service worker target among %+v", all.TargetInfos)
	}
	cdp.call(t, "", "Target.closeTarget", map[string]any{"targetId": worker}, nil)
	select {
	case <-ext.done:
	case <-time.After(5 * time.Second):
		t.Fatal("the socket outlived the stopped worker")
	}
	// A new tab wakes the worker through its tabs.onCreated listener.
	cdp.call(t, "", "Target.createTarget", map[string]any{"url": "about:blank"}, nil)
	again := br.next(t, 10*time.Second)
	hello := again.handshake(t, token)
	if len(hello.Attached) != 1 || hello.Attached[0] != ours.TabID {
		t.Errorf("hello.attached = %v, want [%d] (tab %d is DevTools')", hello.Attached, ours.TabID, theirs.TabID)
	}
	if got := again.eval(t, ours.TabID, "location.pathname"); got != `"/ours"` {
		t.Errorf("after restart: %s", got)
	}
	var att wire.AttachResult
	again.call(t, wire.Attach, 0, wire.TabParams{TabID: ours.TabID}, &att)
	// Chromium lets several clients debug one tab: the extension can join
	// the debugging port's session.
	again.call(t, wire.Attach, 0, wire.TabParams{TabID: theirs.TabID}, &att)
	if att.TargetID != theirs.TargetID {
		t.Errorf("attach to a shared tab: targetId %q, want %q", att.TargetID, theirs.TargetID)
	}
}

// openPopup opens the extension's popup page in a tab of its own and
// returns a session on it once its script can run.
func openPopup(t *testing.T, cdp *cdpClient) (targetID, sessionID string) {
	t.Helper()
	var created struct {
		TargetID string `json:"targetId"`
	}
	cdp.call(t, "", "Target.createTarget", map[string]any{"url": Origin + "/popup.html"}, &created)
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	cdp.call(t, "", "Target.attachToTarget", map[string]any{"targetId": created.TargetID, "flatten": true}, &attached)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var r evalResult
		// The popup's cross-origin opener policy moves it to a process of
		// its own: until it commits there, no context answers.
		cdp.tryCall(t, attached.SessionID, "Runtime.evaluate", map[string]any{
			"expression": `location.pathname === '/popup.html' && document.readyState === 'complete'`, "returnByValue": true,
		}, &r)
		if string(r.Result.Value) == "true" {
			return created.TargetID, attached.SessionID
		}
	}
	t.Fatal("the popup page did not load")
	return "", ""
}

func popupShowsStatus(t *testing.T, browser *Browser) {
	cdp := dialCDP(t, browser.DebugURL)
	targetID, sessionID := openPopup(t, cdp)
	// The popup asks the worker for its status once loaded: poll its text.
	text := ""
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var r evalResult
		cdp.call(t, sessionID, "Runtime.evaluate", map[string]any{
			"expression": `document.getElementById('state')?.textContent === 'connected' ? document.body.innerText : ''`, "returnByValue": true,
		}, &r)
		if text = string(r.Result.Value); len(text) > 2 {
			break
		}
	}
	if !strings.Contains(text, "connected") || !strings.Contains(text, "token from config.json") || strings.Contains(text, "tok-1") {
		t.Errorf("popup text: %s", text)
	}
	cdp.call(t, "", "Target.closeTarget", map[string]any{"targetId": targetID}, nil)
}

// settingsFromStorage saves a URL and token the way the popup does and
// checks that the worker dials again with them; then the bridge refuses the
// token and the worker must not dial again soon.
func settingsFromStorage(t *testing.T, browser *Browser, br *fakeBridge) {
	cdp := dialCDP(t, browser.DebugURL)
	_, sessionID := openPopup(t, cdp)
	set := func(expr string) {
		var r evalResult
		cdp.call(t, sessionID, "Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true}, &r)
		if r.ExceptionDetails != nil {
			t.Fatalf("%s: %s", expr, r.ExceptionDetails.Text)
		}
	}
	set(fmt.Sprintf(`chrome.storage.local.set({url: %q, token: "tok-2"})`, br.url+"?second"))
	c := br.next(t, 5*time.Second)
	c.handshake(t, "tok-2")
	if c.path != "/extension?second" {
		t.Errorf("dialed %s, want the stored URL", c.path)
	}

	// A refused token: the worker waits long before it tries again.
	c.c.Close(wire.CloseBadToken, "wrong token: pair again")
	select {
	case c2 := <-br.conns:
		t.Errorf("the worker dialed again at once after a refusal (path %s)", c2.path)
	case <-time.After(500 * time.Millisecond):
	}
	// New settings end the wait.
	set(`chrome.storage.local.remove(['url', 'token'])`)
	c3 := br.next(t, 5*time.Second)
	c3.handshake(t, "tok-1")
	// A bridge that stops is dialed again quickly.
	c3.c.Close(wire.CloseBridgeShutdown, "bye")
	br.next(t, 3*time.Second).handshake(t, "tok-1")
}
