package extcdp_test

import (
	"context"
	"fmt"
	"log"
	"net/http"

	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/bridge"
	"github.com/livetab/livetab/extcdp"
)

// Plain chromedp in a new tab of the user's Chrome: only the allocator
// changes.
func Example() {
	ctx := context.Background()
	b, err := bridge.Listen(ctx, bridge.Options{}) // 127.0.0.1:9339, the paired token
	if err != nil {
		log.Fatal(err)
	}
	allocCtx, cancel := extcdp.NewAllocator(ctx, b) // waits for the extension
	defer cancel()
	tabCtx, cancel := chromedp.NewContext(allocCtx) // a new tab
	defer cancel()                                  // closes that tab, and only that tab
	if err := chromedp.Do(tabCtx, chromedp.Navigate("https://example.com")); err != nil {
		log.Fatal(err)
	}
	title, err := chromedp.Run(tabCtx, chromedp.Title())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(title)
}

// Work in the tab the user is looking at. Cancelling detaches; the tab
// stays open where it was.
func ExampleActiveTab() {
	ctx := context.Background()
	b, err := bridge.Listen(ctx, bridge.Options{})
	if err != nil {
		log.Fatal(err)
	}
	allocCtx, cancel := extcdp.NewAllocator(ctx, b)
	defer cancel()
	id, err := extcdp.ActiveTab(allocCtx)
	if err != nil {
		log.Fatal(err)
	}
	tabCtx, cancel := chromedp.NewContext(allocCtx, chromedp.WithTargetID(id))
	defer cancel()
	url, err := chromedp.Run(tabCtx, chromedp.Location())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("the user is on", url)
}

// Share one extension with other programs: the relay as a standard CDP
// endpoint on the bridge's port, for chromedp's remote allocator,
// Playwright's connectOverCDP or Puppeteer's connect. `livetab serve` does
// this.
func ExampleRelay_Handler() {
	ctx := context.Background()
	b, err := bridge.Listen(ctx, bridge.Options{})
	if err != nil {
		log.Fatal(err)
	}
	relay, err := extcdp.NewRelay(b, extcdp.RelayOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer relay.Close()
	token := bridge.NewToken()
	var h http.Handler = relay.Handler(extcdp.HandlerOptions{Token: token})
	b.Handle("/json/", h)
	b.Handle("/devtools/", h)
	fmt.Println("clients connect to", relay.BrowserURL(b.Addr().String(), token))
}
