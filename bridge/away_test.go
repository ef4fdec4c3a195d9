package bridge_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/bridge"
)

// Calls made one after another while the extension is away (a client's
// commands in their order, on one session) each waited the whole
// reconnect wait: the fifth failed after five of them. Once a wait ran out
// the calls that follow within the next wait fail at once, saying why;
// the extension's return ends that.
func TestAwayCallsWaitOnce(t *testing.T) {
	b, _ := listen(t) // ReconnectWait 2 s
	e := connect(t, b)
	e.WS.CloseNow()
	<-e.Closed()
	for b.Connected() {
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	for i := range 5 {
		_, err := b.Call(context.Background(), "Runtime.evaluate", 1, nil)
		if !errors.Is(err, bridge.ErrNotConnected) || !strings.Contains(err.Error(), "did not come back") {
			t.Fatalf("call %d while away: %v, want ErrNotConnected saying the extension did not come back", i, err)
		}
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("5 calls one after another while the extension is away took %v; the reconnect wait is 2 s", d.Round(time.Millisecond))
	}
	connect(t, b)
	if _, err := b.Call(context.Background(), "Runtime.evaluate", 1, nil); err != nil {
		t.Fatalf("after the extension came back: %v", err)
	}
}
