package extcdp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/bridge"
	"github.com/livetab/livetab/extcdp"
)

func TestNoExtensionSaysHowToInstall(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b, err := bridge.Listen(ctx, bridge.Options{Addr: "127.0.0.1:0", Token: bridge.NewToken()})
	if err != nil {
		t.Fatal(err)
	}
	actx, cancelA := extcdp.NewAllocator(ctx, b, extcdp.Options{ConnectTimeout: 100 * time.Millisecond})
	defer cancelA()
	tctx, cancelT := chromedp.NewContext(actx)
	defer cancelT()
	err = chromedp.Do(tctx, chromedp.Navigate("about:blank"))
	if err == nil || !strings.Contains(err.Error(), "Load unpacked") || !strings.Contains(err.Error(), "pair") {
		t.Fatalf("got %v", err)
	}
}
