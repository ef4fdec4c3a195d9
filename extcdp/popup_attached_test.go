package extcdp_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"
	"github.com/coder/websocket"

	"github.com/livetab/livetab/internal/fakeext"
	"github.com/livetab/livetab/internal/wire"
)

// TestAutoAttachedPopupSaysAttached: a page of a client's tab opens a
// popup, which the extension reports before it has a URL. The client
// auto-attaches, so for it the popup is attached, in the attachedToTarget
// and in every targetInfoChanged after. Puppeteer drops a targetInfoChanged
// that says attached: false, and a page target with no URL yet waits for
// one to initialise: its waitForTarget for the popup never returned (the
// flake of TestClients, 1 broad run in 3).
func TestAutoAttachedPopupSaysAttached(t *testing.T) {
	var ext *fakeext.Ext
	r := relayOf(t, fakeBridgeWith(t, func(e *fakeext.Ext) { ext = e }))
	c := r.NewClient()
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	call := func(id int64, method, params string) {
		t.Helper()
		c.Handle(&cdproto.Message{ID: id, Method: cdproto.MethodType(method), Params: jsonv2.Value(params)})
		for {
			m, err := c.Next(ctx)
			if err != nil {
				t.Fatalf("%s: %v", method, err)
			}
			if m.ID == id {
				if m.Error != nil {
					t.Fatalf("%s: %s", method, m.Error.Message)
				}
				return
			}
		}
	}
	call(1, "Target.setDiscoverTargets", `{"discover":true}`)
	call(2, "Target.setAutoAttach", `{"autoAttach":true,"waitForDebuggerOnStart":false,"flatten":true}`)
	call(3, "Target.createTarget", `{"url":"about:blank"}`)
	extEvent(t, ctx, ext, wire.TabCreated, []byte(`{"tabId":2,"targetId":"T2","windowId":1,"openerTabId":1,"url":"","title":"","active":true,"attached":false,"popup":true}`))
	extEvent(t, ctx, ext, wire.TabUpdated, []byte(`{"tabId":2,"targetId":"T2","windowId":1,"openerTabId":1,"url":"http://127.0.0.1/popup","title":"","active":true,"attached":false,"popup":true}`))
	var attached, changed bool
	for !attached || !changed {
		m, err := c.Next(ctx)
		if err != nil {
			t.Fatalf("attached %v, changed %v: %v", attached, changed, err)
		}
		var p struct {
			TargetInfo target.Info `json:"targetInfo"`
		}
		jsonv2.Unmarshal(m.Params, &p, wire.Options)
		if p.TargetInfo.TargetID != "T2" {
			continue
		}
		switch m.Method {
		case cdproto.EventTargetAttachedToTarget:
			attached = true
		case cdproto.EventTargetTargetInfoChanged:
			changed = true
		default:
			continue
		}
		if !p.TargetInfo.Attached {
			t.Errorf("%s of the auto-attached popup says attached: false: %s", m.Method, m.Params)
		}
		if p.TargetInfo.OpenerID != "T1" {
			t.Errorf("%s of the popup names opener %q, want T1", m.Method, p.TargetInfo.OpenerID)
		}
	}
}

// extEvent sends an event of the fake extension to the relay.
func extEvent(t *testing.T, ctx context.Context, ext *fakeext.Ext, method string, params []byte) {
	t.Helper()
	data, _ := wire.Encode(&wire.Frame{Method: method, Params: jsonv2.Value(params)})
	if err := ext.Send(ctx, websocket.MessageText, data); err != nil {
		t.Fatal(err)
	}
}
