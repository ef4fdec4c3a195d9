// Command quickstart shows livetab end to end: livetab.Connect finds a
// browser (your running `livetab serve`, your Chrome's paired extension, or
// Chrome's own remote debugging), and on a fresh machine launches a
// headless Chromium with the extension; then plain chromedp drives a local
// page in a new tab. -launch skips your Chrome and always launches.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab"
	"github.com/livetab/livetab/extension"
)

const page = `<!doctype html><title>livetab quickstart</title>
<input id="name"><button id="greet" onclick="out.textContent='Hello, '+document.getElementById('name').value">Greet</button>
<p id="out"></p>`

var launch = flag.Bool("launch", false, "always launch a headless Chromium, never use your Chrome")

func main() {
	flag.Parse()
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

	// 1. A browser: the first way that answers, and as the last way a
	// headless Chromium with the extension loaded.
	opts := livetab.Options{Launch: &extension.LaunchOptions{Headless: true}}
	if *launch {
		opts.Ways = []livetab.Way{livetab.WayLaunch}
	}
	allocCtx, cancelAlloc, err := livetab.Connect(ctx, opts)
	if err != nil {
		return err
	}
	defer cancelAlloc() // closes what Connect started, a launched browser too
	fmt.Println("browser:", livetab.FromContext(allocCtx))

	// 2. Plain chromedp on that allocator.
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
