package bridge_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/livetab/livetab/bridge"
	"github.com/livetab/livetab/extension"
)

// Pair the extension with a bridge: write it out with the bridge's URL and
// token for chrome://extensions → Load unpacked, then wait for it.
func Example() {
	ctx := context.Background()
	b, err := bridge.Listen(ctx, bridge.Options{}) // the token lives in ~/.config/livetab/token
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	if err := extension.Write("livetab-extension", extension.Config{URL: b.URL(), Token: b.Token()}); err != nil {
		log.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := b.WaitConnected(wctx); err != nil {
		log.Fatal(err) // says how to install and pair the extension
	}
	fmt.Println("extension connected:", b.Hello().UserAgent)
}
