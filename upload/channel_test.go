package upload_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/upload"
)

// A page that removes the transfer frame while it fetches ends the upload
// at once with why, instead of leaving it waiting for an answer that will
// not come; nothing stays in the page.
func TestChannelFrameRemovedMidway(t *testing.T) {
	ctx := open(t, liveTab)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`addEventListener('message', (e) => {
		if (e.data && e.data.ready) setTimeout(() => document.querySelectorAll('iframe').forEach((f) => f.remove()), 20);
	}, true)`)); err != nil {
		t.Fatal(err)
	}
	slow := upload.Reader("removed.bin", &slowReader{n: 16 << 20}, 16<<20)
	start := time.Now()
	octx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	_, err := upload.Files(octx, upload.CSS("#multi"), []upload.File{slow})
	if err == nil || !strings.Contains(err.Error(), "removed the transfer frame") {
		t.Fatalf("got %v, want the removed frame", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the upload took %v to fail", d)
	}
	left, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('iframe').length + document.querySelector('#multi').files.length`))
	if err != nil || left != 0 {
		t.Errorf("the page keeps %d frames or files (%v)", left, err)
	}
}

// slowReader gives n zero bytes, 256 KiB every 10 ms, so that the frame is
// still fetching when the page removes it.
type slowReader struct{ n int }

func (r *slowReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	time.Sleep(10 * time.Millisecond)
	k := min(len(p), r.n, 256<<10)
	clear(p[:k])
	r.n -= k
	return k, nil
}
