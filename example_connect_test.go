package livetab_test

import (
	"context"
	"fmt"
	"log"

	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab"
	"github.com/livetab/livetab/extension"
)

// One call finds the person's browser, whichever way it is reachable, and
// a headless Chromium with the extension when none is (Options.Launch).
func ExampleConnect() {
	ctx := context.Background()
	allocCtx, cancel, err := livetab.Connect(ctx, livetab.Options{Launch: &extension.LaunchOptions{Headless: true}})
	if err != nil {
		log.Fatal(err) // it lists why each way was skipped
	}
	defer cancel()
	// e.g. "extension: the extension connected to ws://127.0.0.1:9339/extension;
	// skipped serve: no endpoint file at /home/ada/.config/livetab/endpoint.json (...)"
	log.Println(livetab.FromContext(allocCtx))

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
