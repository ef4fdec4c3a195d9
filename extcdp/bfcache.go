package extcdp

import (
	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/page"

	"github.com/livetab/livetab/internal/wire"
)

// The person's Chrome keeps pages in the back/forward cache; the browsers
// Playwright launches do not (--disable-back-forward-cache). A page
// restored from that cache commits (Page.frameNavigated of type
// BackForwardCacheRestore) but fires no DOMContentLoaded or load again,
// so Playwright's page.goBack and goForward, which wait for load, ran
// into their timeout with the page already back (TestClientsCompat; the
// same happens to connectOverCDP on a plain Chrome,
// microsoft/playwright-mcp#1635). The relay follows such a commit with the
// two lifecycle events the page fired when it first loaded, which is what
// the restored document is: loaded. Puppeteer, which knows the cache,
// already waits for nothing more on a restore.

// bfcacheRestored returns the lifecycle events to follow a main session's
// event with: DOMContentLoaded and load for a frame restored from the
// back/forward cache, nothing otherwise.
func bfcacheRestored(method cdproto.MethodType, params jsonv2.Value) []jsonv2.Value {
	if method != cdproto.EventPageFrameNavigated {
		return nil
	}
	var p struct {
		Frame struct {
			ID       string `json:"id"`
			LoaderID string `json:"loaderId"`
		} `json:"frame"`
		Type page.NavigationType `json:"type"`
	}
	if jsonv2.Unmarshal(params, &p, wire.Options) != nil || p.Type != page.NavigationTypeBackForwardCacheRestore || p.Frame.ID == "" {
		return nil
	}
	var out []jsonv2.Value
	for _, name := range []string{"DOMContentLoaded", "load"} {
		ev, _ := jsonv2.Marshal(struct {
			FrameID   string  `json:"frameId"`
			LoaderID  string  `json:"loaderId"`
			Name      string  `json:"name"`
			Timestamp float64 `json:"timestamp"`
		}{p.Frame.ID, p.Frame.LoaderID, name, 0}, wire.Options)
		out = append(out, ev)
	}
	return out
}
