package extcdp_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// One client keeps 1024 cheap commands in flight on its own tab (the most
// it may); another client's commands on its own tab wait behind them at the
// extension, first come first served.
func TestRedTeamFloodLatency(t *testing.T) {
	// Before the window (fair.go): ~1.6 ms alone, ~90 ms under the flood
	// (57x). The margin is wide: the machine's load moves both figures.
	a, b := dialRaw(t), dialRaw(t)
	tA := field(a.must("", "Target.createTarget", map[string]any{"url": site.URL + "/form?A"}), "targetId")
	sA := field(a.must("", "Target.attachToTarget", map[string]any{"targetId": tA, "flatten": true}), "sessionId")
	tB := field(b.must("", "Target.createTarget", map[string]any{"url": site.URL + "/form?B"}), "targetId")
	sB := field(b.must("", "Target.attachToTarget", map[string]any{"targetId": tB, "flatten": true}), "sessionId")
	p50 := func() time.Duration {
		var d []time.Duration
		for range 30 {
			s := time.Now()
			b.must(sB, "Runtime.evaluate", map[string]any{"expression": "1+1"})
			d = append(d, time.Since(s))
		}
		slices.Sort(d)
		return d[len(d)/2]
	}
	quiet := p50()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // A's replies are read by its rawClient
		for i := int64(1 << 20); ctx.Err() == nil; i++ {
			if a.ws.Write(ctx, websocket.MessageText, []byte(fmt.Sprintf(`{"id":%d,"sessionId":%q,"method":"Runtime.evaluate","params":{"expression":"1+1"}}`, i, sA))) != nil {
				return
			}
		}
	}()
	time.Sleep(2 * time.Second)
	busy := p50()
	cancel()
	t.Logf("B's p50 evaluate: %v alone, %v while A keeps 1024 commands in flight", quiet, busy)
	if busy > 10*quiet+20*time.Millisecond {
		t.Errorf("one client's flood slows another's commands %.0fx", float64(busy)/float64(quiet))
	}
}
