package extcdp_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/fakeext"
	"github.com/livetab/livetab/internal/wire"
)

// TestRedTeamActivityFloodKeepsOthers: the popup shows the last 50
// actions of all clients. A client that says it did 400 things must not
// push another's actions out of the person's sight (a program hiding what
// another did, or what it did itself before, behind noise).
func TestRedTeamActivityFloodKeepsOthers(t *testing.T) {
	var mu sync.Mutex
	var last wire.ActivityParams
	b := fakeBridgeWith(t, func(e *fakeext.Ext) {
		e.Handle(wire.Activity, func(f *wire.Frame) (jsonv2.Value, *cdproto.Error) {
			mu.Lock()
			defer mu.Unlock()
			jsonv2.Unmarshal(f.Params, &last, wire.Options)
			return nil, nil
		})
	})
	r := relayOf(t, b)
	victim := r.NewClient()
	defer victim.Close()
	victim.SetName("victim")
	victim.Handle(&cdproto.Message{ID: 1, Method: "Livetab.noteAction", Params: jsonv2.Value(`{"action":"browser_navigate https://bank.example","decision":"allowed"}`)})
	flooder := r.NewClient()
	defer flooder.Close()
	flooder.SetName("flooder")
	for i := range 400 {
		flooder.Handle(&cdproto.Message{ID: int64(10 + i), Method: "Livetab.noteAction", Params: jsonv2.Value(fmt.Sprintf(`{"action":"noise %d","decision":"allowed"}`, i))})
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		var seen, flood int
		for _, a := range last.Actions {
			switch {
			case a.Name == "victim" && strings.Contains(a.What, "bank.example"):
				seen++
			case a.Name == "flooder":
				flood++
			}
		}
		done := flood > 0 && strings.Contains(fmt.Sprint(last.Actions), "noise 399")
		mu.Unlock()
		if done {
			if seen != 1 {
				t.Errorf("after another client's flood the person no longer sees the victim's action (%d of %d entries are the flooder's)", flood, wire.MaxActions)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no report with the flood's last action")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
