package extcdp_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/coder/websocket"

	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/internal/browsertest"
	"github.com/livetab/livetab/internal/fakeext"
	"github.com/livetab/livetab/internal/wire"
)

// Attacks on the person's kill switch (pause.go, the extension's pause):
// while paused, no client may get the debugger onto a tab, open, show or
// close one, or run a command in a page, whichever door it knocks on.

// pauser presses Pause and Resume fast, through a popup kept open, as a
// person clicking the button does: a runtime message to the worker.
type pauser struct {
	u     *browsertest.User
	popup string
	sid   string
}

func newPauser(t *testing.T) *pauser {
	t.Helper()
	if env == nil {
		browsertest.RequireChromium(t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u, err := env.User(ctx)
	if err != nil {
		t.Fatal(err)
	}
	popup, err := u.OpenPopup(ctx)
	if err != nil {
		u.Close()
		t.Fatal(err)
	}
	res, err := u.Call(ctx, "Target.attachToTarget", map[string]any{"targetId": popup, "flatten": true})
	if err != nil {
		t.Fatal(err)
	}
	p := &pauser{u: u, popup: popup, sid: field(res, "sessionId")}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := p.setSeen(ctx, false); err != nil {
			// The popup, or the person's connection, may be gone (under
			// load a write to it timed out once, and every later test of
			// the package then ran paused): resume through fresh ones.
			if err := u.Pause(ctx, false); err != nil {
				resumed := false
				for i := 0; i < 3 && !resumed && ctx.Err() == nil; i++ {
					if u2, err2 := env.User(ctx); err2 == nil {
						resumed = u2.Pause(ctx, false) == nil
						u2.Close()
					}
				}
				if !resumed {
					t.Errorf("resuming after the test: %v", err)
				}
			}
		}
		u.CloseTab(ctx, popup)
		u.Close()
	})
	return p
}

// set pauses or resumes and returns once the worker answered.
func (p *pauser) set(ctx context.Context, on bool) error {
	_, err := p.u.CallSession(ctx, p.sid, "Runtime.evaluate", map[string]any{
		"expression":   fmt.Sprintf(`chrome.runtime.sendMessage({type: 'livetab.pause', paused: %v}).then((s) => s.paused)`, on),
		"awaitPromise": true,
	})
	return err
}

// setSeen is set, then waits until the relay heard of it too (ext.paused
// reaches it a moment after the popup's answer).
func (p *pauser) setSeen(ctx context.Context, on bool) error {
	if err := p.set(ctx, on); err != nil {
		return err
	}
	for env.Relay.Status().Paused != on {
		select {
		case <-ctx.Done():
			return fmt.Errorf("the relay did not hear of paused=%v: %w", on, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

// debugged lists the pages under a debugger as chrome.debugger sees them
// (the extension's own attachments count), the popup itself left out.
func (p *pauser) debugged(t *testing.T) []string {
	t.Helper()
	res, err := p.u.CallSession(context.Background(), p.sid, "Runtime.evaluate", map[string]any{
		"expression":    `chrome.debugger.getTargets().then((ts) => ts.filter((x) => x.attached && x.type === 'page' && !x.url.startsWith('chrome-extension:')).map((x) => x.id))`,
		"awaitPromise":  true,
		"returnByValue": true,
	})
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Result struct {
			Value []string `json:"value"`
		} `json:"result"`
	}
	if err := unmarshal(res, &r); err != nil {
		t.Fatal(err)
	}
	return r.Result.Value
}

// pages counts the pages Chrome has.
func (p *pauser) pages(t *testing.T) int {
	t.Helper()
	ts, err := p.u.Targets(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, x := range ts {
		if x.Type == "page" {
			n++
		}
	}
	return n
}

// An attach on its way to chrome.debugger when the person presses Pause
// must not leave the debugger on the tab for the whole pause.
func TestRedteamPauseDuringAttach(t *testing.T) {
	p := newPauser(t)
	raw := dialRaw(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := range 12 {
		id, err := p.u.OpenTab(ctx, site.URL+"/form?attachrace")
		if err != nil {
			t.Fatal(err)
		}
		// The relay learns of the tab before the race starts.
		if _, err := raw.call("", "Target.getTargetInfo", map[string]any{"targetId": id}); err != nil {
			t.Fatal(err)
		}
		reply := make(chan rawMsg, 1)
		go func() {
			m, _ := raw.send("", "Target.attachToTarget", map[string]any{"targetId": id, "flatten": true})
			reply <- m
		}()
		time.Sleep(time.Duration(i%4) * time.Millisecond)
		if err := p.setSeen(ctx, true); err != nil {
			t.Fatal(err)
		}
		m := <-reply
		time.Sleep(50 * time.Millisecond) // a detach on its way lands
		if d := p.debugged(t); len(d) > 0 {
			t.Errorf("round %d: the debugger stayed on the tab while paused (attach reply: error %v)", i, m.Error)
		}
		for _, ts := range env.Relay.Status().Tabs {
			if ts.TargetID == id && ts.Attached {
				t.Errorf("round %d: the relay thinks tab %d attached while paused", i, ts.TabID)
			}
		}
		if err := p.setSeen(ctx, false); err != nil {
			t.Fatal(err)
		}
		// After resume, a session the attach gave is either ended or
		// works: never one whose commands find no debugger.
		if m.Error == nil {
			s := field(m.Result, "sessionId")
			if r, err := raw.send(s, "Runtime.evaluate", map[string]any{"expression": "1"}); err != nil || r.Error != nil && !strings.Contains(r.Error.Message, "Session with given id not found") {
				t.Errorf("round %d: after resume, the session of the raced attach: %v %+v", i, err, r.Error)
			}
		}
		p.u.CloseTab(ctx, id)
	}
}

// Every door a client has while paused: auto-attach, a browser session,
// browser contexts, the Livetab domain, a session from before the pause,
// Chrome's child session ids. Each answers with the pause error at once,
// and no tab gets the debugger, opens or closes.
func TestRedteamPauseEveryDoor(t *testing.T) {
	raw := dialRaw(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// A client on a page with a cross-origin iframe before the pause.
	raw.must("", "Target.setAutoAttach", map[string]any{"autoAttach": true, "flatten": true, "waitForDebuggerOnStart": false})
	tid := field(raw.must("", "Target.createTarget", map[string]any{"url": site.URL + "/frames"}), "targetId")
	sid := field(raw.must("", "Target.attachToTarget", map[string]any{"targetId": tid, "flatten": true}), "sessionId")
	raw.must(sid, "Page.enable", nil)
	raw.must(sid, "Target.setAutoAttach", map[string]any{"autoAttach": true, "flatten": true, "waitForDebuggerOnStart": false})
	raw.must(sid, "Page.reload", nil)
	raw.must(sid, "Runtime.evaluate", map[string]any{"expression": "1"})
	var childSID string
	for deadline := time.Now().Add(10 * time.Second); childSID == "" && time.Now().Before(deadline); {
		raw.mu.Lock()
		for _, e := range raw.events {
			if e.Method == "Target.attachedToTarget" && strings.Contains(string(e.Params), `"type":"iframe"`) {
				childSID = field(e.Params, "sessionId")
			}
		}
		raw.mu.Unlock()
		time.Sleep(50 * time.Millisecond)
	}
	if childSID == "" {
		t.Log("no child session of the cross-origin iframe: that door is not tried")
	}
	// A person's tab, which no client has touched.
	p := newPauser(t)
	person, err := p.u.OpenTab(ctx, site.URL+"/form?person")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.u.CloseTab(context.Background(), person) })
	// The relay knows the tab before the pause, or auto-attach has no
	// tab to announce (a flake under load in CI).
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(string(raw.must("", "Target.getTargets", nil)), person) && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}

	if err := p.setSeen(ctx, true); err != nil {
		t.Fatal(err)
	}
	before := p.pages(t)

	refused := func(session, method string, params any) {
		t.Helper()
		start := time.Now()
		m, err := raw.send(session, method, params)
		if err != nil {
			t.Errorf("%s while paused: %v", method, err)
			return
		}
		if m.Error == nil || !strings.Contains(m.Error.Message, wire.PausedMessage) {
			t.Errorf("%s (session %q) while paused: %s %v, want the pause error", method, session, m.Result, m.Error)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s while paused took %v", method, d)
		}
	}
	// Auto-attach announces sessions, but none may run a command.
	raw.mu.Lock()
	autoBefore := len(raw.events)
	raw.mu.Unlock()
	raw.must("", "Target.setAutoAttach", map[string]any{"autoAttach": false, "flatten": true, "waitForDebuggerOnStart": false})
	raw.must("", "Target.setAutoAttach", map[string]any{"autoAttach": true, "flatten": true, "waitForDebuggerOnStart": true})
	raw.mu.Lock()
	var autos []string
	for i, e := range raw.events {
		// The person's tab may have been announced attached before the
		// pause, as the relay listed it: its session is a door all the
		// same.
		if e.Method == "Target.attachedToTarget" && (i >= autoBefore || strings.Contains(string(e.Params), person)) {
			autos = append(autos, field(e.Params, "sessionId"))
		}
	}
	raw.mu.Unlock()
	if len(autos) == 0 {
		t.Error("auto-attach while paused announced no tab at all; the door is not tried")
	}
	for _, s := range autos {
		refused(s, "Runtime.runIfWaitingForDebugger", nil)
		refused(s, "Runtime.evaluate", map[string]any{"expression": "document.title"})
	}
	// The browser level.
	refused("", "Target.attachToTarget", map[string]any{"targetId": person, "flatten": true})
	refused("", "Target.createTarget", map[string]any{"url": "about:blank"})
	refused("", "Target.activateTarget", map[string]any{"targetId": person})
	refused("", "Livetab.closeTab", map[string]any{"targetId": person})
	bc := field(raw.must("", "Target.createBrowserContext", nil), "browserContextId")
	refused("", "Target.createTarget", map[string]any{"url": "about:blank", "browserContextId": bc})
	// A browser session.
	bs := field(raw.must("", "Target.attachToBrowserTarget", nil), "sessionId")
	refused(bs, "Target.attachToTarget", map[string]any{"targetId": person, "flatten": true})
	refused(bs, "Target.createTarget", map[string]any{"url": "about:blank"})
	refused(bs, "Livetab.closeTab", map[string]any{"targetId": person})
	// The session of before the pause, and its target-level commands.
	refused(sid, "Runtime.evaluate", map[string]any{"expression": "1"})
	refused(sid, "Page.navigate", map[string]any{"url": site.URL + "/form"})
	refused(sid, "Target.createTarget", map[string]any{"url": "about:blank"})
	refused(sid, "Target.attachToTarget", map[string]any{"targetId": person, "flatten": true})
	refused(sid, "Livetab.closeTab", map[string]any{"targetId": person})
	refused(sid, "Browser.getVersion", nil)
	if childSID != "" {
		refused(childSID, "Runtime.evaluate", map[string]any{"expression": "1"})
		refused(childSID, "Target.createTarget", map[string]any{"url": "about:blank"})
	}
	// What needs no tab still works.
	raw.must("", "Target.getTargets", nil)
	raw.must("", "Livetab.getActiveTab", nil)
	raw.must("", "Livetab.keepTab", map[string]any{"targetId": tid})

	if d := p.debugged(t); len(d) > 0 {
		t.Errorf("tabs under the debugger while paused: %v", d)
	}
	if after := p.pages(t); after != before {
		t.Errorf("%d pages while paused, %d before: one opened or closed", after, before)
	}
	// The kept tab is the person's now; close it as they would.
	p.u.CloseTab(ctx, tid)
}

// A command the page is still running when the person pauses fails within
// a bound: the pause does not leave it waiting for its page.
func TestRedteamPauseDuringCommand(t *testing.T) {
	raw := dialRaw(t)
	tid := field(raw.must("", "Target.createTarget", map[string]any{"url": site.URL + "/form?inflight"}), "targetId")
	sid := field(raw.must("", "Target.attachToTarget", map[string]any{"targetId": tid, "flatten": true}), "sessionId")
	raw.must(sid, "Runtime.evaluate", map[string]any{"expression": "1"})
	p := newPauser(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	reply := make(chan rawMsg, 1)
	go func() {
		m, _ := raw.send(sid, "Runtime.evaluate", map[string]any{"expression": "new Promise((r) => setTimeout(r, 15000))", "awaitPromise": true})
		reply <- m
	}()
	time.Sleep(200 * time.Millisecond)
	if err := p.setSeen(ctx, true); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-reply:
		if m.Error == nil || !strings.Contains(m.Error.Message, wire.PausedMessage) {
			t.Errorf("the command in flight at the pause: %s %+v, want the pause error", m.Result, m.Error)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("a command in flight at the pause was not answered within 3 s of it")
	}
}

// The person pressing Pause and Resume twice, fast, while a program works:
// every command is answered within a bound, the relay ends in the
// extension's state, and after the last Resume a program works again.
func TestRedteamPauseFlapping(t *testing.T) {
	p := newPauser(t)
	// The popup's clicks wait on the worker, which pauses and resumes the
	// program's tabs eight times: beside the other packages' browsers in
	// CI that took past 60 s (2026-11-30), with every command of the
	// program answered within its bound all the same.
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	raw := dialRaw(t)
	raw.bound = 5 * time.Second
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		// A program that keeps opening a tab and running in it.
		for {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			m, err := raw.send("", "Target.createTarget", map[string]any{"url": "about:blank"})
			if err != nil {
				done <- err
				return
			}
			if m.Error != nil {
				continue
			}
			tid := field(m.Result, "targetId")
			if m, err = raw.send("", "Target.attachToTarget", map[string]any{"targetId": tid, "flatten": true}); err != nil {
				done <- err
				return
			}
			if m.Error == nil {
				if _, err := raw.send(field(m.Result, "sessionId"), "Runtime.evaluate", map[string]any{"expression": "1"}); err != nil {
					done <- err
					return
				}
			}
			if _, err := raw.send("", "Target.closeTarget", map[string]any{"targetId": tid}); err != nil {
				done <- err
				return
			}
		}
	}()
	for _, on := range []bool{true, true, false, false, true, false, true, false} {
		go p.set(ctx, on) // not waited for: the clicks overlap
		time.Sleep(time.Duration(5+time.Now().UnixNano()%7) * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	// The last click wins, on both sides.
	if err := p.setSeen(ctx, false); err != nil {
		t.Fatal(err)
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatalf("the program hung through the flapping: %v", err)
	}
	time.Sleep(100 * time.Millisecond)
	if env.Relay.Status().Paused {
		t.Fatal("the relay still thinks paused after the last Resume")
	}
	tid := field(raw.must("", "Target.createTarget", map[string]any{"url": "about:blank"}), "targetId")
	sid := field(raw.must("", "Target.attachToTarget", map[string]any{"targetId": tid, "flatten": true}), "sessionId")
	if v := raw.must(sid, "Runtime.evaluate", map[string]any{"expression": "40 + 2"}); !strings.Contains(string(v), "42") {
		t.Errorf("after the flapping: %s", v)
	}
	raw.must("", "Target.closeTarget", map[string]any{"targetId": tid})
	if d := p.debugged(t); len(d) > 0 {
		t.Errorf("after the program closed its tabs, still under the debugger: %v", d)
	}
}

// Close while a createTarget waits for an extension that is slow to open
// the tab: Close returns within its bound, leaves no goroutine waiting,
// and the tab the extension opens after all is closed, since livetab
// opened it for a client that is gone.
func TestRedteamRelayCloseDuringCreateTarget(t *testing.T) {
	var ext *fakeext.Ext
	creates := make(chan int64, 1)
	closes := make(chan int64, 4)
	br := fakeBridgeWith(t, func(e *fakeext.Ext) {
		ext = e
		e.Handle(wire.CreateTab, func(f *wire.Frame) (jsonv2.Value, *cdproto.Error) {
			creates <- f.ID
			return fakeext.NoReply, nil
		})
		e.Handle(wire.CloseTab, func(f *wire.Frame) (jsonv2.Value, *cdproto.Error) {
			var p wire.TabParams
			unmarshal(f.Params, &p)
			closes <- p.TabID
			return nil, nil
		})
	})
	before := goruntime.NumGoroutine()
	r, err := extcdp.NewRelay(br, extcdp.RelayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := r.NewClient()
	c.Handle(&cdproto.Message{ID: 1, Method: cdproto.CommandTargetCreateTarget, Params: jsonv2.Value(`{"url":"about:blank"}`)})
	id := <-creates
	start := time.Now()
	closed := make(chan struct{})
	go func() {
		r.Close()
		close(closed)
	}()
	// The extension opens the tab after all, while the relay closes.
	time.Sleep(300 * time.Millisecond)
	late, _ := wire.Encode(&wire.Frame{ID: id, Result: jsonv2.Value(`{"tabId":5,"targetId":"T5","windowId":1,"url":"about:blank","title":"","active":true,"attached":false}`)})
	if err := ext.Send(context.Background(), websocket.MessageText, late); err != nil {
		t.Fatal(err)
	}
	select {
	case <-closed:
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("Close took %v once the extension answered", d)
		}
	case <-time.After(7 * time.Second):
		t.Fatal("Close did not return within 7 s")
	}
	select {
	case tab := <-closes:
		if tab != 5 {
			t.Errorf("closed tab %d, want 5", tab)
		}
	case <-time.After(3 * time.Second):
		t.Error("the tab the extension opened for a client of the closed relay stays open")
	}
	noGoroutinesLeft(t, before, 1)
}

// Close while clients keep coming, through both doors, and a second Close
// at the same time: nothing hangs, nothing races (go test -race), every
// connection ends, and no goroutine is left.
func TestRedteamRelayCloseUnderLoad(t *testing.T) {
	br := fakeBridge(t)
	before := goruntime.NumGoroutine()
	r, err := extcdp.NewRelay(br, extcdp.RelayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(r.Handler(extcdp.HandlerOptions{Token: "tok"}))
	url := r.BrowserURL(strings.TrimPrefix(srv.URL, "http://"), "tok")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() { // endpoint connections that attach and evaluate
			for {
				select {
				case <-stop:
					return
				default:
				}
				ws, resp, err := websocket.Dial(ctx, url, nil)
				if err != nil {
					if resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
						t.Errorf("a connection during Close: %v", err)
					}
					return // refused: the relay closed
				}
				for i, msg := range []string{
					`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"T1","flatten":true}}`,
					`{"id":2,"method":"Target.createTarget","params":{"url":"about:blank"}}`,
				} {
					if ws.Write(ctx, websocket.MessageText, []byte(msg)) != nil {
						break
					}
					if _, _, err := ws.Read(ctx); err != nil {
						if ctx.Err() != nil {
							t.Errorf("reply %d: the relay left the connection hanging", i+1)
						}
						break
					}
				}
				ws.CloseNow()
			}
		})
		wg.Go(func() { // in-process clients
			for {
				select {
				case <-stop:
					return
				default:
				}
				c := r.NewClient()
				c.Handle(&cdproto.Message{ID: 1, Method: cdproto.CommandTargetAttachToTarget, Params: jsonv2.Value(`{"targetId":"T1","flatten":true}`)})
				_, err := c.Next(ctx)
				c.Close()
				switch {
				case ctx.Err() != nil:
					t.Error("an in-process client hangs through Close")
					return
				case errors.Is(err, extcdp.ErrClientClosed):
					return // the relay closed
				}
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	closed := make(chan struct{}, 2)
	for range 2 {
		go func() {
			r.Close()
			closed <- struct{}{}
		}()
	}
	for range 2 {
		select {
		case <-closed:
		case <-time.After(8 * time.Second):
			t.Fatal("Close did not return within 8 s")
		}
	}
	time.Sleep(100 * time.Millisecond)
	close(stop)
	wg.Wait()
	srv.Close()
	noGoroutinesLeft(t, before, 1)
}
