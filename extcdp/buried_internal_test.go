package extcdp

import (
	"strings"
	"testing"
	"time"
)

// TestBuriedTabOutlivesACrawl: a closed tab's deny is kept for
// buriedWindow however many tabs of the same client close after it, up to
// maxClosedTabs. With 256, a program that denies downloads and went on to
// close 280 tabs forgot its hostile page's tab, whose download then began
// and landed in the person's Downloads folder (red team, 2 of 2,
// 2026-12-01). Past linkTabWindow a record keeps no page, so that many
// records stay small.
func TestBuriedTabOutlivesACrawl(t *testing.T) {
	now := time.Unix(1e9, 0)
	var d downloadState
	deny := func(id int64, page string, at time.Time) {
		d.bury(closedTab{id: id, page: page, deny: true}, at)
	}
	deny(1, "http://127.0.0.1/hostile", now)
	crawl := 2000
	for i := range crawl {
		at := now.Add(time.Second + time.Duration(i)*(8*time.Minute)/time.Duration(crawl))
		deny(int64(100+i), "http://127.0.0.1/page?"+strings.Repeat("x", 2000), at)
	}
	at := now.Add(9 * time.Minute)
	g := d.buried(1, at)
	if g == nil || !g.deny {
		t.Fatalf("the hostile tab's deny is forgotten after %d closed tabs in 9 minutes: %+v", crawl, g)
	}
	if g.page != "" {
		t.Errorf("a record past linkTabWindow keeps its page %q", g.page)
	}
	pages := 0
	for _, o := range d.closed {
		pages += len(o.page)
	}
	if pages > 50*2100 { // the tabs of the last linkTabWindow, 0.24 s apart
		t.Errorf("the records keep %d bytes of pages", pages)
	}
	if d.buried(1, now.Add(buriedWindow+time.Second)) != nil {
		t.Error("a closed tab is still buried past buriedWindow")
	}

	d.bury(closedTab{id: 5, page: "http://127.0.0.1/" + strings.Repeat("y", maxReferrer)}, at)
	if g := d.buried(5, at); g == nil || g.page != "" {
		t.Errorf("a page longer than any referrer is kept: %+v", g)
	}
	for i := range maxClosedTabs + 10 {
		deny(int64(10000+i), "", at)
	}
	if len(d.closed) > maxClosedTabs {
		t.Errorf("%d closed tabs kept, more than %d", len(d.closed), maxClosedTabs)
	}
}
