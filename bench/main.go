// Command bench measures one CDP round trip (Runtime.evaluate of 1+1) and
// a 5 MiB result, through each road to the same headless Chromium, in one
// run, and prints the ratios against direct CDP:
//
//   - direct: chromedp over the browser's own remote-debugging port
//   - probe: the bridge alone (Go → extension → chrome.debugger → tab), the
//     floor livetab's Go side stands on
//   - livetab: chromedp through extcdp's in-process transport
//   - endpoint: chromedp's remote allocator through livetab's CDP endpoint
//
// Usage: go run ./bench [-n 2000]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http/httptest"
	"slices"
	"strings"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/internal/browsertest"
)

func main() {
	n := flag.Int("n", 2000, "round trips per road")
	big := flag.Int("big", 5, "size of the large result in MiB")
	flag.Parse()
	if err := run(*n, *big); err != nil {
		log.Fatal(err)
	}
}

type road struct {
	name string
	eval func(ctx context.Context, expr string) error
}

func run(n, bigMiB int) error {
	env, err := browsertest.StartEnv(browsertest.Options{DebugPort: true})
	if err != nil {
		return err
	}
	defer env.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	// Each road gets its own tab, so no road shares an attachment.
	direct, cancelDirect := remote.NewAllocator(ctx, env.Browser.DebugURL)
	defer cancelDirect()
	directTab, cancelDT := chromedp.NewContext(direct)
	defer cancelDT()

	inproc, cancelIn := extcdp.NewAllocator(ctx, env.Bridge)
	defer cancelIn()
	livetabTab, cancelLT := chromedp.NewContext(inproc)
	defer cancelLT()

	srv := httptest.NewServer(env.Relay.Handler(extcdp.HandlerOptions{Token: "bench"}))
	defer srv.Close()
	ep, cancelEP := remote.NewAllocator(ctx, env.Relay.BrowserURL(strings.TrimPrefix(srv.URL, "http://"), "bench"))
	defer cancelEP()
	endpointTab, cancelET := chromedp.NewContext(ep)
	defer cancelET()

	for _, tab := range []context.Context{directTab, livetabTab, endpointTab} {
		if err := chromedp.Do(tab, chromedp.Navigate("about:blank")); err != nil {
			return err
		}
	}
	// The probe uses the in-process tab's attachment, straight through the
	// bridge.
	probeTab := int64(0)
	for _, ts := range env.Relay.Status().Tabs {
		if ts.TargetID == string(chromedp.FromContext(livetabTab).Target.TargetID) {
			probeTab = ts.TabID
		}
	}
	chromedpEval := func(tab context.Context) func(context.Context, string) error {
		return func(_ context.Context, expr string) error {
			_, err := chromedp.Call(tab, runtime.Evaluate, runtime.EvaluateParams{Expression: expr, ReturnByValue: new(true)})
			return err
		}
	}
	roads := []road{
		{"direct CDP", chromedpEval(directTab)},
		{"bridge probe", func(ctx context.Context, expr string) error {
			_, err := env.Bridge.Call(ctx, "Runtime.evaluate", probeTab, map[string]any{"expression": expr, "returnByValue": true})
			return err
		}},
		{"livetab in-process", chromedpEval(livetabTab)},
		{"livetab endpoint", chromedpEval(endpointTab)},
	}

	fmt.Printf("Runtime.evaluate('1+1'), %d round trips each, interleaved, %s\n\n", n, env.Bridge.Hello().UserAgent)
	ds, err := measure(ctx, roads, "1+1", n)
	if err != nil {
		return err
	}
	fmt.Printf("%-20s %10s %10s %10s %10s\n", "road", "p50", "p90", "x direct", "x probe")
	for i, r := range roads {
		d := ds[i]
		fmt.Printf("%-20s %10s %10s %9.2fx %9.2fx\n", r.name, d[len(d)/2].Round(time.Microsecond), d[len(d)*9/10].Round(time.Microsecond),
			ratio(d[len(d)/2], ds[0][len(ds[0])/2]), ratio(d[len(d)/2], ds[1][len(ds[1])/2]))
	}

	expr := fmt.Sprintf("'x'.repeat(%d)", bigMiB<<20)
	ds, err = measure(ctx, roads, expr, 7)
	if err != nil {
		return err
	}
	fmt.Printf("\n%d MiB string result, 7 runs each\n\n%-20s %10s %10s\n", bigMiB, "road", "MB/s", "x direct")
	for i, r := range roads {
		rate := func(d []time.Duration) float64 { return float64(bigMiB<<20) / d[len(d)/2].Seconds() / 1e6 }
		fmt.Printf("%-20s %10.1f %9.2fx\n", r.name, rate(ds[i]), rate(ds[i])/rate(ds[0]))
	}
	return nil
}

// measure times each road n times, interleaved, so that the machine's
// noise falls on every road alike. It returns the sorted times per road.
func measure(ctx context.Context, roads []road, expr string, n int) ([][]time.Duration, error) {
	ds := make([][]time.Duration, len(roads))
	for i := -min(n/10+1, 50); i < n; i++ { // the negative rounds warm up
		for j, r := range roads {
			start := time.Now()
			if err := r.eval(ctx, expr); err != nil {
				return nil, fmt.Errorf("%s: %w", r.name, err)
			}
			if i >= 0 {
				ds[j] = append(ds[j], time.Since(start))
			}
		}
	}
	for _, d := range ds {
		slices.Sort(d)
	}
	return ds, nil
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
