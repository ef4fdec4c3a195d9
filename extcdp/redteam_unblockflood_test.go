package extcdp_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestRedTeamUnblockingFlood: as TestRedTeamFloodLatency, but A floods
// with commands fair.go lets past the window because they "unblock" a
// page: Page.stopLoading, Debugger.resume, Runtime.terminateExecution.
// Each is cheap and harmless on A's own tab, and takes no slot of the
// window: A has up to MaxInFlight (1024) of them at the extension at
// once, and B's commands wait behind them, first come first served, as
// before the window.
func TestRedTeamUnblockingFlood(t *testing.T) {
	for _, method := range []string{"Page.stopLoading", "Debugger.resume", "Runtime.terminateExecution"} {
		t.Run(method, func(t *testing.T) {
			a, b := dialRaw(t), dialRaw(t)
			tA := field(a.must("", "Target.createTarget", map[string]any{"url": site.URL + "/form?unblock-A"}), "targetId")
			sA := field(a.must("", "Target.attachToTarget", map[string]any{"targetId": tA, "flatten": true}), "sessionId")
			tB := field(b.must("", "Target.createTarget", map[string]any{"url": site.URL + "/form?unblock-B"}), "targetId")
			sB := field(b.must("", "Target.attachToTarget", map[string]any{"targetId": tB, "flatten": true}), "sessionId")
			p50 := func() (time.Duration, time.Duration) {
				var d []time.Duration
				for range 30 {
					s := time.Now()
					b.must(sB, "Runtime.evaluate", map[string]any{"expression": "1+1"})
					d = append(d, time.Since(s))
				}
				slices.Sort(d)
				return d[len(d)/2], d[len(d)-1]
			}
			quiet, quietMax := p50()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() { // A's replies are read by its rawClient
				for i := int64(1 << 20); ctx.Err() == nil; i++ {
					if a.ws.Write(ctx, websocket.MessageText, []byte(fmt.Sprintf(`{"id":%d,"sessionId":%q,"method":%q,"params":{}}`, i, sA, method))) != nil {
						return
					}
				}
			}()
			time.Sleep(2 * time.Second)
			busy, busyMax := p50()
			cancel()
			t.Logf("B's p50 evaluate: %v alone (max %v), %v (max %v) while A floods %s", quiet, quietMax, busy, busyMax, method)
			if busy > 10*quiet+20*time.Millisecond {
				t.Errorf("A's flood of %s slows B's commands %.0fx (p50 %v -> %v)", method, float64(busy)/float64(quiet), quiet, busy)
			}
		})
	}
}
