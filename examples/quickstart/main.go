// Command quickstart shows livetab end to end on a fresh machine: it starts
// a bridge, writes the extension out with the bridge's address and token,
// launches a headless Chromium with it loaded, and drives a local page with
// plain chromedp. With your own Chrome, skip the launch: load the extension
// once (livetab extension DIR, then Load unpacked) and keep the rest.
package main

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/bridge"
	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/extension"
)

const page = `<!doctype html><title>livetab quickstart</title>
<input id="name"><button id="greet" onclick="out.textContent='Hello, '+document.getElementById('name').value">Greet</button>
<p id="out"></p>`

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, page)
	}))
	defer site.Close()

	// 1. The bridge: loopback only, with a fresh pairing token for the demo.
	b, err := bridge.Listen(ctx, bridge.Options{Addr: "127.0.0.1:0", Token: bridge.NewToken()})
	if err != nil {
		return err
	}
	fmt.Println("bridge listening at", b.URL())

	// 2. The extension, written out with the bridge's address and token,
	// and a headless Chromium that loads it.
	browser, err := extension.Start(ctx, extension.Config{URL: b.URL(), Token: b.Token()}, extension.LaunchOptions{Headless: true})
	if err != nil {
		return err
	}
	defer browser.Close()
	b.Watch(browser) // if it dies, fail at once with its reason
	fmt.Println("launched Chromium with the livetab extension", extension.ID)

	// 3. Plain chromedp on a livetab allocator.
	allocCtx, cancelAlloc := extcdp.NewAllocator(ctx, b)
	defer cancelAlloc()
	tabCtx, cancelTab := chromedp.NewContext(allocCtx) // a new tab in that Chrome
	defer cancelTab()                                  // closes that tab, and only that tab

	if err := chromedp.Do(tabCtx,
		chromedp.Navigate(site.URL),
		chromedp.SendKeys(chromedp.CSS("#name"), "Ada"),
		chromedp.Click(chromedp.CSS("#greet")),
	); err != nil {
		return err
	}
	fmt.Println("navigated to", site.URL, "typed \"Ada\", clicked Greet")
	title, err := chromedp.Run(tabCtx, chromedp.Title())
	if err != nil {
		return err
	}
	out, err := chromedp.Run(tabCtx, chromedp.Text(chromedp.CSS("#out")))
	if err != nil {
		return err
	}
	fmt.Printf("page title %q, page says %q\n", title, out)
	return nil
}
