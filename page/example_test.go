package page_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/page"
)

// An agent loop: take a snapshot, let the model pick an element by its
// number, act on it, and look again.
func Example() {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Fox maker</title>
<input aria-label="Prompt">
<button onclick="document.querySelector('output').value = 'a picture of ' + document.querySelector('input').value">Generate</button>
<output></output>`)
	}))
	defer ts.Close()

	// Any chromedp tab works: here one of chromedp's own browser, or a
	// livetab tab of a person's Chrome.
	allocCtx, cancel := chromedp.NewExecAllocator(context.Background(),
		append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath("/usr/lib/chromium/chromium"))...)
	defer cancel()
	tabCtx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()

	p, err := page.New(tabCtx)
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	if err := p.Navigate(ctx, ts.URL); err != nil {
		log.Fatal(err)
	}

	// The "model" of this example types into the first text box, then
	// clicks the first button.
	for step := 0; step < 3; step++ {
		snap, err := p.Snapshot(ctx, page.SnapshotOptions{})
		if err != nil {
			log.Fatal(err)
		}
		for _, line := range strings.Split(snap.Text, "\n") {
			if strings.HasPrefix(line, "[") {
				fmt.Println(line)
			}
		}
		switch step {
		case 0:
			err = p.Type(ctx, page.Index(1), "red fox", page.TypeOptions{})
		case 1:
			err = p.Click(ctx, page.Index(2), page.ClickOptions{})
		}
		if err != nil {
			// A stale index, a covered element, an open dialog... each
			// error says what to do next; an agent hands it to the model.
			log.Fatal(err)
		}
	}
	c, err := p.Read(ctx, page.ReadOptions{Format: "text"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(strings.TrimSpace(c.Text))
	// Output:
	// [1] textbox "Prompt"
	// [2] button "Generate"
	// [1] textbox "Prompt" value="red fox" focused
	// [2] button "Generate"
	// [1] textbox "Prompt" value="red fox"
	// [2] button "Generate" focused
	// Generate a picture of red fox
}
