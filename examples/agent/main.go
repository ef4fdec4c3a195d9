// Command agent shows page's tool surface as an LLM would use it, in a tab
// driven through the livetab extension: the declarative tool list, then
// calls by name with JSON arguments, each answered with text (or an
// image) that goes straight back to the model. A scripted "model" stands in
// for the real one here.
package main

import (
	"context"
	"fmt"
	"log"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab"
	"github.com/livetab/livetab/agent"
	"github.com/livetab/livetab/extension"
	"github.com/livetab/livetab/page"
)

const studio = `<!doctype html><title>Fox studio</title>
<label>Prompt <input id="prompt"></label>
<button onclick="out.textContent='Generated: ' + document.getElementById('prompt').value">Generate</button>
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
		fmt.Fprint(w, studio)
	}))
	defer site.Close()

	// The browser: the one livetab.Connect finds (your serve, your Chrome's
	// extension, Chrome's remote debugging), else a headless Chromium with
	// the extension, as in examples/quickstart.
	allocCtx, cancelAlloc, err := livetab.Connect(ctx, livetab.Options{Launch: &extension.LaunchOptions{Headless: true}})
	if err != nil {
		return err
	}
	defer cancelAlloc()
	fmt.Println("browser:", livetab.FromContext(allocCtx))
	tabCtx, cancelTab := chromedp.NewContext(allocCtx)
	defer cancelTab()
	p, err := page.New(tabCtx)
	if err != nil {
		return err
	}
	defer p.Close()

	// What a model is offered: name, description, JSON Schema of the input
	// (agent.Schema generates it from the tool's argument struct; here only
	// the argument names are printed).
	fmt.Println("tools offered to the model:")
	for _, t := range page.Tools() {
		schema, err := agent.Schema(t.Args)
		if err != nil {
			return err
		}
		fmt.Printf("  %-20s %s (%s)\n", t.Name, firstSentence(t.Description), strings.Join(slices.Sorted(maps.Keys(schema.Properties)), ", "))
	}

	// The model's calls, and what it gets back.
	for _, call := range []struct{ name, args string }{
		{"browser_navigate", fmt.Sprintf(`{"url": %q}`, site.URL)},
		{"browser_snapshot", `{}`},
		{"browser_type", `{"index": 1, "text": "a red fox"}`},
		{"browser_click", `{"index": 2}`},
		{"browser_read", `{"format": "text"}`},
		{"browser_click", `{"index": 99}`}, // a wrong index: the model reads the error and recovers
	} {
		res, err := p.Call(ctx, call.name, []byte(call.args))
		if err != nil {
			return err // only a dead context or a closed Page end the loop
		}
		status := "ok"
		if res.IsError {
			status = "tool error"
		}
		fmt.Printf("\n> %s %s  (%s)\n%s\n", call.name, call.args, status, indent(res.Text))
	}
	return nil
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i+1]
	}
	return s
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n  ")
}
