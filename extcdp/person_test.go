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

	"github.com/livetab/livetab/internal/fakeext"
	"github.com/livetab/livetab/internal/wire"
)

// A client chooses its name, its methods and what it says it did: the
// report to the extension stays small and a few a second however it
// floods.
func TestActivityReportStaysSmall(t *testing.T) {
	var mu sync.Mutex
	biggest, reports := 0, 0
	var last wire.ActivityParams
	b := fakeBridgeWith(t, func(e *fakeext.Ext) {
		e.Handle(wire.Activity, func(f *wire.Frame) (jsonv2.Value, *cdproto.Error) {
			mu.Lock()
			defer mu.Unlock()
			reports++
			biggest = max(biggest, len(f.Params))
			jsonv2.Unmarshal(f.Params, &last, wire.Options)
			return nil, nil
		})
	})
	r := relayOf(t, b)
	c := r.NewClient()
	defer c.Close()
	c.SetName(strings.Repeat("name", 10000))
	c.Handle(&cdproto.Message{ID: 1, Method: "Target.attachToTarget", Params: jsonv2.Value(`{"targetId":"T1","flatten":true}`)})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var sid string
	for sid == "" {
		m, err := c.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m.ID == 1 {
			var res struct {
				SessionID string `json:"sessionId"`
			}
			jsonv2.Unmarshal(m.Result, &res, wire.Options)
			sid = res.SessionID
		}
	}
	start := time.Now()
	huge := strings.Repeat("X", 100_000)
	for i := range 400 {
		c.Handle(&cdproto.Message{ID: int64(10 + i), SessionID: target.SessionID(sid), Method: cdproto.MethodType(huge + string(rune('a'+i%26)))})
		c.Handle(&cdproto.Message{ID: int64(1000 + i), SessionID: target.SessionID(sid), Method: "Livetab.noteAction", Params: jsonv2.Value(`{"action":"` + huge + `","decision":"` + huge + `"}`)})
	}
	time.Sleep(time.Second)
	mu.Lock()
	defer mu.Unlock()
	elapsed := time.Since(start)
	if biggest > 40_000 {
		t.Errorf("a report of %d bytes", biggest)
	}
	if max := int(elapsed/(250*time.Millisecond)) + 3; reports > max {
		t.Errorf("%d reports in %v", reports, elapsed)
	}
	if len(last.Actions) != wire.MaxActions || len(last.Clients) != 1 || len([]rune(last.Clients[0].Name)) > 60 {
		t.Errorf("the last report: %d actions, clients %+v", len(last.Actions), last.Clients)
	}
	t.Logf("%d reports, the biggest %d bytes", reports, biggest)
}
