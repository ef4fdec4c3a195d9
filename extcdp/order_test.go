package extcdp_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"
	"github.com/coder/websocket"

	"github.com/livetab/livetab/internal/fakeext"
	"github.com/livetab/livetab/internal/wire"
)

// TestContextEventsWaitForTheFrameTree: Playwright sends Page.getFrameTree
// and Runtime.enable together, and drops the execution contexts told before
// the frame tree's reply. Through chrome.debugger the main world's context,
// told in answer to the enable, can reach the relay before that reply (the
// two travel separate ways to the extension): Playwright never heard of
// the main world, and popup.evaluate hung (4 of 9 popups in a red-team
// run). The extension here sends the context first; the client must hear
// it after the reply, as from Chrome.
func TestContextEventsWaitForTheFrameTree(t *testing.T) {
	for _, fail := range []bool{false, true} {
		var ext *fakeext.Ext
		var mu sync.Mutex
		var treeID int64
		r := relayOf(t, fakeBridgeWith(t, func(e *fakeext.Ext) {
			ext = e
			e.Handle("Page.getFrameTree", func(f *wire.Frame) (jsonv2.Value, *cdproto.Error) {
				mu.Lock()
				treeID = f.ID
				mu.Unlock()
				return fakeext.NoReply, nil
			})
			e.Handle("Runtime.enable", func(f *wire.Frame) (jsonv2.Value, *cdproto.Error) {
				ctx := context.Background()
				ev, _ := wire.Encode(&wire.Frame{Method: "Runtime.executionContextCreated", TabID: 1,
					Params: jsonv2.Value(`{"context":{"id":1,"uniqueId":"u1","origin":"","name":"","auxData":{"isDefault":true,"type":"default","frameId":"T1"}}}`)})
				e.Send(ctx, websocket.MessageText, ev)
				mu.Lock()
				id := treeID
				mu.Unlock()
				rep := &wire.Frame{ID: id, Result: jsonv2.Value(`{"frameTree":{"frame":{"id":"T1","loaderId":"L","url":"about:blank","securityOrigin":"","mimeType":"text/html"}}}`)}
				if fail {
					rep = &wire.Frame{ID: id, Error: &cdproto.Error{Code: -32000, Message: "no tree"}}
				}
				out, _ := wire.Encode(rep)
				e.Send(ctx, websocket.MessageText, out)
				return nil, nil
			})
		}))
		_ = ext
		c := r.NewClient()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		next := func() *cdproto.Message {
			t.Helper()
			m, err := c.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
		c.Handle(&cdproto.Message{ID: 1, Method: "Target.attachToTarget", Params: jsonv2.Value(`{"targetId":"T1","flatten":true}`)})
		var sid string
		for sid == "" {
			m := next()
			if m.ID == 1 {
				if m.Error != nil {
					t.Fatal(m.Error.Message)
				}
				var p struct {
					SessionID string `json:"sessionId"`
				}
				jsonv2.Unmarshal(m.Result, &p, wire.Options)
				sid = p.SessionID
			}
		}
		c.Handle(&cdproto.Message{ID: 2, SessionID: target.SessionID(sid), Method: "Page.getFrameTree", Params: jsonv2.Value(`{}`)})
		time.Sleep(100 * time.Millisecond) // the tree's command is at the extension first
		c.Handle(&cdproto.Message{ID: 3, SessionID: target.SessionID(sid), Method: "Runtime.enable", Params: jsonv2.Value(`{}`)})
		var order []string
		for len(order) < 3 {
			m := next()
			switch {
			case m.ID == 2:
				order = append(order, "tree")
			case m.ID == 3:
				order = append(order, "enable")
			case m.Method == cdproto.EventRuntimeExecutionContextCreated:
				order = append(order, "context")
			}
		}
		if order[0] != "tree" {
			t.Errorf("fail=%v: the client heard %v: the main world's context came before the frame tree's reply, and Playwright drops it", fail, order)
		}
		c.Close()
		cancel()
	}
}
