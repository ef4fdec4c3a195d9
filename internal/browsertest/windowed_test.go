package browsertest_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/livetab/livetab/internal/browsertest"
)

// The person's browser shows Chrome's debugging bar while livetab drives a
// tab, and the bar takes height from the page. A windowed test browser
// with DebuggerBar must show it too, or the tests of what the person sees
// would pass on a page of the wrong size.
func TestWindowedDebuggerBarTakesHeight(t *testing.T) {
	height := func(bar bool) int64 {
		env := browsertest.Start(t, browsertest.Options{Windowed: true, DebuggerBar: bar})
		ctx, cancel := chromedp.NewContext(env.Allocator(t))
		defer cancel()
		ctx, cancel2 := context.WithTimeout(ctx, 60*time.Second)
		defer cancel2()
		// The bar comes up once the debugger attaches; give it a moment
		// to take its place before measuring.
		if err := chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.Sleep(time.Second)); err != nil {
			t.Fatal(err)
		}
		h, err := chromedp.Run(ctx, chromedp.Evaluate[int64](`innerHeight`))
		if err != nil {
			t.Fatal(err)
		}
		env.Close()
		return h
	}
	silent, shown := height(false), height(true)
	t.Logf("innerHeight: %d silent, %d with the debugging bar", silent, shown)
	if silent <= 0 || shown >= silent {
		t.Fatalf("the debugging bar took no height: innerHeight %d with it, %d without", shown, silent)
	}
}
