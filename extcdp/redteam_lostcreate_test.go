package extcdp_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/internal/fakeext"
	"github.com/livetab/livetab/internal/wire"
)

// TestRedTeamLostCreateLeavesNoTab: the extension opens a client's tab,
// then its service worker stops before it answers. The client gets an
// error and never learns the tab; once the extension is back the tab is
// listed as if the person had opened it, to every client, and stays open,
// no one's. It must be closed.
func TestRedTeamLostCreateLeavesNoTab(t *testing.T) {
	var mu sync.Mutex
	tabs := map[int64]string{1: `{"tabId":1,"targetId":"T1","windowId":1,"url":"http://127.0.0.1/persons-tab","title":"","active":true,"attached":false}`}
	var closed []int64
	handlers := func(e *fakeext.Ext, die bool) {
		e.Handle(wire.Targets, func(*wire.Frame) (jsonv2.Value, *cdproto.Error) {
			mu.Lock()
			defer mu.Unlock()
			var list []string
			for _, ti := range tabs {
				list = append(list, ti)
			}
			return jsonv2.Value(`{"targets":[` + strings.Join(list, ",") + `]}`), nil
		})
		e.Handle(wire.CreateTab, func(f *wire.Frame) (jsonv2.Value, *cdproto.Error) {
			mu.Lock()
			defer mu.Unlock()
			n := int64(len(tabs) + 1)
			tabs[n] = fmt.Sprintf(`{"tabId":%d,"targetId":"T%d","windowId":1,"url":"http://127.0.0.1/asked-for","title":"","active":false,"attached":false,"created":true}`, n, n)
			if die {
				go e.WS.CloseNow() // the worker stops before it answers
				return fakeext.NoReply, nil
			}
			return jsonv2.Value(tabs[n]), nil
		})
		e.Handle(wire.CloseTab, func(f *wire.Frame) (jsonv2.Value, *cdproto.Error) {
			var p wire.TabParams
			jsonv2.Unmarshal(f.Params, &p, wire.Options)
			mu.Lock()
			defer mu.Unlock()
			delete(tabs, p.TabID)
			closed = append(closed, p.TabID)
			return nil, nil
		})
	}
	url, r, _ := fakeEndpoint(t, extcdp.HandlerOptions{}, func(e *fakeext.Ext) { handlers(e, true) })
	a := dialRawURL(t, url)
	if _, err := a.call("", "Target.createTarget", map[string]any{"url": "http://127.0.0.1/asked-for"}); err == nil || !strings.Contains(err.Error(), "disconnected") {
		t.Fatalf("createTarget as the extension went away: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e2, _, err := fakeext.Dial(ctx, r.Bridge().URL(), fakeext.Options{Token: r.Bridge().Token()})
	if err != nil {
		t.Fatal(err)
	}
	handlers(e2, false)
	go e2.Serve(ctx)
	t.Cleanup(func() { e2.WS.CloseNow() })
	for {
		mu.Lock()
		n := len(closed)
		mu.Unlock()
		if n > 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the tab opened for a createTarget that failed is still open, and listed: %s", a.must("", "Target.getTargets", nil))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := string(a.must("", "Target.getTargets", nil)); strings.Contains(got, "asked-for") {
		t.Errorf("a client lists the tab no one owns: %s", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(closed) != 1 || closed[0] != 2 {
		t.Errorf("closed tabs %v, want only the one opened for the client", closed)
	}
}
