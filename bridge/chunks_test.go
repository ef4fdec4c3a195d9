package bridge_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/livetab/livetab/bridge"
	"github.com/livetab/livetab/internal/fakeext"
	"github.com/livetab/livetab/internal/wire"
)

// The frame limit bounds what the bridge holds across all streams: many
// unfinished streams, each under the limit, must not add up past it.
func TestChunkStreamsShareTheLimit(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b, err := bridge.Listen(ctx, bridge.Options{Addr: "127.0.0.1:0", Token: "tok", MaxFrameSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	e, _, err := fakeext.Dial(ctx, b.URL(), fakeext.Options{Token: b.Token()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.WS.CloseNow()
	wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
	defer wcancel()
	if err := b.WaitConnected(wctx); err != nil {
		t.Fatal(err)
	}
	piece := bytes.Repeat([]byte("a"), 400)
	for stream := byte(1); stream <= 5; stream++ {
		// Never the last chunk: each stream stays open.
		if err := e.Send(ctx, websocket.MessageBinary, append([]byte{0, 0, 0, 0, stream}, piece...)); err != nil {
			break // the bridge may close before the last one
		}
	}
	code, reason := closeStatus(t, e.WS)
	if code != wire.CloseTooBig {
		t.Fatalf("close %d %q, want %d after 2000 bytes in open streams over a limit of 1000", code, reason, wire.CloseTooBig)
	}
}
