package extcdp_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"

	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/internal/fakeext"
	"github.com/livetab/livetab/internal/wire"
)

// TestFloodLeavesOthersTheExtension: client A keeps 1024 commands in
// flight on a tab (the endpoint's limit per client); client B sends one.
// Before, all of A's went to the extension at once and B's waited behind
// them there, first come first served: B's p50 evaluate went from ~1.6 ms
// to ~90 ms (57x, the red team's TestRedTeamFloodLatency). Now a client
// has at most a window of commands at the extension, the rest wait in its
// own lane, and B's command goes on its way at once.
func TestFloodLeavesOthersTheExtension(t *testing.T) {
	defer extcdp.SetSlowCommand(time.Minute)()
	var mu sync.Mutex
	atExt := map[string]int{}
	r := relayOf(t, fakeBridgeWith(t, func(e *fakeext.Ext) {
		e.Handle("Runtime.evaluate", func(f *wire.Frame) (jsonv2.Value, *cdproto.Error) {
			var p struct {
				Expression string `json:"expression"`
			}
			jsonv2.Unmarshal(f.Params, &p, wire.Options)
			mu.Lock()
			atExt[p.Expression]++
			mu.Unlock()
			if p.Expression == "A" {
				return fakeext.NoReply, nil // a wedged page: A's wait at the extension
			}
			return jsonv2.Value(`{"result":{"type":"number","value":2}}`), nil
		})
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	attach := func(c interface {
		Handle(*cdproto.Message)
		Next(context.Context) (*cdproto.Message, error)
	}) target.SessionID {
		c.Handle(&cdproto.Message{ID: 1, Method: "Target.attachToTarget", Params: jsonv2.Value(`{"targetId":"T1","flatten":true}`)})
		for {
			m, err := c.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if m.ID == 1 {
				var res struct {
					SessionID target.SessionID `json:"sessionId"`
				}
				jsonv2.Unmarshal(m.Result, &res, wire.Options)
				return res.SessionID
			}
		}
	}
	a, b := r.NewClient(), r.NewClient()
	defer a.Close()
	defer b.Close()
	sa, sb := attach(a), attach(b)
	for i := range 1024 {
		a.Handle(&cdproto.Message{ID: int64(100 + i), SessionID: sa, Method: "Runtime.evaluate", Params: jsonv2.Value(`{"expression":"A"}`)})
	}
	time.Sleep(200 * time.Millisecond)
	b.Handle(&cdproto.Message{ID: 7, SessionID: sb, Method: "Runtime.evaluate", Params: jsonv2.Value(`{"expression":"B"}`)})
	for {
		m, err := b.Next(ctx)
		if err != nil {
			mu.Lock()
			t.Fatalf("B's command behind A's flood: %v (%d of A's at the extension)", err, atExt["A"])
		}
		if m.ID == 7 {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if n := atExt["A"]; n > 16 {
		t.Errorf("%d of A's commands at the extension at once, want at most 16", n)
	}
}

// TestWaitingCommandsLeaveTheWindow: a client waits on 40 promises of its
// pages at once (a waitForSelector in each of 40 tabs); the click that
// ends them must still go out, though the window holds 16.
func TestWaitingCommandsLeaveTheWindow(t *testing.T) {
	r := relayOf(t, fakeBridgeWith(t, func(e *fakeext.Ext) {
		e.Handle("Runtime.evaluate", func(f *wire.Frame) (jsonv2.Value, *cdproto.Error) {
			if strings.Contains(string(f.Params), "wait") {
				return fakeext.NoReply, nil
			}
			return jsonv2.Value(`{"result":{"type":"number","value":2}}`), nil
		})
	}))
	c := r.NewClient()
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c.Handle(&cdproto.Message{ID: 1, Method: "Target.attachToTarget", Params: jsonv2.Value(`{"targetId":"T1","flatten":true}`)})
	var sid target.SessionID
	for sid == "" {
		m, err := c.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			SessionID target.SessionID `json:"sessionId"`
		}
		jsonv2.Unmarshal(m.Result, &res, wire.Options)
		sid = res.SessionID
	}
	for i := range 40 {
		c.Handle(&cdproto.Message{ID: int64(100 + i), SessionID: sid, Method: "Runtime.evaluate", Params: jsonv2.Value(`{"expression":"wait","awaitPromise":true}`)})
	}
	c.Handle(&cdproto.Message{ID: 7, SessionID: sid, Method: "Runtime.evaluate", Params: jsonv2.Value(`{"expression":"click"}`)})
	for {
		m, err := c.Next(ctx)
		if err != nil {
			t.Fatalf("the click behind 40 waits: %v", err)
		}
		if m.ID == 7 {
			return
		}
	}
}
