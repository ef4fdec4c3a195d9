package extcdp_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// Messages just under 1 MiB do not wait for the large-message turn, and
// one client may have 1024 commands in flight: 1024 of them on one session
// held 843 MiB of serve's heap while they waited in its lane.
func TestRedTeamManyNearlyLargeCommands(t *testing.T) {
	a := dialRaw(t)
	tA := field(a.must("", "Target.createTarget", map[string]any{"url": site.URL + "/form?A"}), "targetId")
	sA := field(a.must("", "Target.attachToTarget", map[string]any{"targetId": tA, "flatten": true}), "sessionId")
	var peak atomic.Uint64
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
		}
	}()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	pad := strings.Repeat("x", 1<<20-300)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// 280 MiB of commands: unbounded, they would pass the 200 MiB bound;
	// bounded, the heap peaked at 80 MiB (400 commands took 69 s in CI).
	const n = 280
	start := time.Now()
	for i := range n {
		msg := fmt.Sprintf(`{"id":%d,"sessionId":%q,"method":"Runtime.evaluate","params":{"expression":"1","objectGroup":%q}}`, 1000+i, sA, pad)
		if err := a.ws.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(3 * time.Second)
	close(stop)
	grew := (peak.Load() - base) >> 20
	t.Logf("%d commands of 1 MiB in %v: serve's heap in use peaked %d MiB above its start", n, time.Since(start).Round(time.Millisecond), grew)
	if grew > 200 {
		t.Errorf("one client's commands of 1 MiB held %d MiB of serve's heap", grew)
	}
}
