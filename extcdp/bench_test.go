package extcdp_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/bridge"
	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/internal/fakeext"
)

// fakeBridge is a bridge with the in-process fake extension connected: it
// measures what livetab's Go side costs, without Chrome.
func fakeBridge(tb testing.TB) *bridge.Bridge { return fakeBridgeWith(tb, nil) }

// fakeBridgeWith is fakeBridge with the fake's handlers changed by setup.
func fakeBridgeWith(tb testing.TB, setup func(*fakeext.Ext)) *bridge.Bridge {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	b, err := bridge.Listen(ctx, bridge.Options{Addr: "127.0.0.1:0", Token: bridge.NewToken()})
	if err != nil {
		tb.Fatal(err)
	}
	e, _, err := fakeext.Dial(ctx, b.URL(), fakeext.Options{Token: b.Token()})
	if err != nil {
		tb.Fatal(err)
	}
	if setup != nil {
		setup(e)
	}
	go e.Serve(ctx)
	wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
	defer wcancel()
	if err := b.WaitConnected(wctx); err != nil {
		tb.Fatal(err)
	}
	return b
}

// relayOf opens the relay of b until the test ends.
func relayOf(tb testing.TB, b *bridge.Bridge) *extcdp.Relay {
	tb.Helper()
	r, err := extcdp.NewRelay(b, extcdp.RelayOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return r
}

// BenchmarkBridgeCall is one request/reply through the bridge alone.
func BenchmarkBridgeCall(b *testing.B) {
	br := fakeBridge(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := br.Call(ctx, "Runtime.evaluate", 1, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRoundTrip is one chromedp command through extcdp and the bridge
// to the fake extension and back.
func BenchmarkRoundTrip(b *testing.B) {
	br := fakeBridge(b)
	actx, cancel := extcdp.NewAllocator(context.Background(), br)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil {
		b.Fatal(err)
	}
	params := runtime.EvaluateParams{Expression: "1+1"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := chromedp.Call(ctx, runtime.Evaluate, params); err != nil {
			b.Fatal(err)
		}
	}
}
