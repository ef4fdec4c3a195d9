package extcdp_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/fakeext"
	"github.com/livetab/livetab/internal/wire"
)

// TestUnfinishedDownloadsAreBounded: a page (or a program through
// Livetab.downloadBlob) starts downloads that Chrome never reports done:
// a server that never ends its response, a blob URL that does not exist
// (in a CI run ~60 of 600 were still in progress after 30 s). The relay's
// records of them are bounded too, however long serve runs.
func TestUnfinishedDownloadsAreBounded(t *testing.T) {
	var ext *fakeext.Ext
	r := relayOf(t, fakeBridgeWith(t, func(e *fakeext.Ext) { ext = e }))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const n = 5000
	for i := range n {
		p, _ := jsonv2.Marshal(wire.DownloadInfo{ID: int64(i + 1), URL: fmt.Sprintf("http://127.0.0.1:1/never-%d", i), State: "in_progress"}, wire.Options)
		extEvent(t, ctx, ext, wire.Download, p)
	}
	// The last report is in once the relay answers a later request.
	last, _ := jsonv2.Marshal(wire.DownloadInfo{ID: n + 1, URL: "http://127.0.0.1:1/last", State: "in_progress"}, wire.Options)
	extEvent(t, ctx, ext, wire.Download, last)
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := r.Counts()["downloads"]
		if got > 0 && got <= 2*512 && r.HasChromeDownload(n+1) {
			t.Logf("%d records after %d unfinished downloads", got, n+1)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d download records after %d unfinished downloads, want at most %d", got, n+1, 2*512)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
