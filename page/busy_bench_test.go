package page_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/chromedp/chromedp"
)

// BenchmarkEvaluateBesideBusyPages is one Runtime.evaluate on a quiet tab
// while 0 or 3 other tabs of the same program run a page that asks a
// server every 5 ms (a hostile or merely chatty page), on plain Chromium
// and through livetab. Every chromedp tab has the Network domain on, so
// each request of the busy tabs is events on the way back. Compare
// livetab's figures with exec's of the same run:
//
//	go test ./page -run '^$' -bench BesideBusyPages -benchtime 50x
//
// Measured on a 2-core machine (2026-11-29, 30 evaluations): alone 2.4 ms
// plain, 5.0 ms livetab; beside 3 busy tabs 7.9 ms plain, 59 ms livetab
// (87-165 ms in other runs). Through livetab the busy tabs' own fetches
// never settled, where plain Chromium failed most of them; one busy tab
// alone completed 64% of its fetches through livetab, all of them once
// its client turned Network off. Not forwarding the Network events in the
// extension took 59 ms to 41 ms: most of the cost is Chrome's, on the
// chrome.debugger path (batching frames did nothing: the events come one a
// task, about 350 a second here).
func BenchmarkEvaluateBesideBusyPages(b *testing.B) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "fine") }))
	b.Cleanup(other.Close)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/busy" {
			fmt.Fprintf(w, `<!doctype html><title>busy</title><script>setInterval(() => fetch(%q, {mode: 'no-cors'}).catch(() => {}), 5)</script>`, other.URL+"/tick")
			return
		}
		fmt.Fprint(w, `<!doctype html><title>quiet</title>`)
	}))
	b.Cleanup(srv.Close)
	for _, bk := range []struct {
		name   string
		newTab func(testing.TB) context.Context
	}{{"exec", backends.ExecTab}, {"livetab", backends.LivetabTab}} {
		for _, busy := range []int{0, 3} {
			b.Run(fmt.Sprintf("%s/busy=%d", bk.name, busy), func(b *testing.B) {
				quiet := bk.newTab(b)
				if err := chromedp.Do(quiet, chromedp.Navigate(srv.URL+"/quiet")); err != nil {
					b.Fatal(err)
				}
				for range busy {
					tab := bk.newTab(b)
					if err := chromedp.Do(tab, chromedp.Navigate(srv.URL+"/busy")); err != nil {
						b.Fatal(err)
					}
				}
				for b.Loop() {
					if _, err := chromedp.Run(quiet, chromedp.Evaluate[int]("1")); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
