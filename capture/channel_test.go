package capture_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/capture"
)

// Through livetab a big blob the browser may not download goes through the
// transfer channel: the extension's transfer page posts it to the relay,
// nothing is downloaded, the bytes are the source's. A page that keeps the
// frame from loading gets the slices instead; a cancel leaves no file and
// no frame.
func TestChannelLivetab(t *testing.T) {
	t.Run("Media", func(t *testing.T) {
		ctx, c := open(t, liveTab)
		generate(t, ctx)
		dl := t.TempDir()
		for _, rungs := range [][]capture.Rung{{capture.RungChannel, capture.RungPage}, {capture.RungChannel}, {capture.RungBody, capture.RungChannel, capture.RungPage}} {
			opts := []capture.Option{capture.To(capture.Dir(t.TempDir())), capture.SaveAbove(1), capture.DownloadDir(dl)}
			if rungs != nil {
				opts = append(opts, capture.Rungs(rungs...))
			}
			res, err := c.Element(opCtx(t), capture.CSS("#result-blobvideo"), opts...)
			if err != nil {
				t.Fatal(err)
			}
			checkAsset(t, res, "blobvideo", capture.RungChannel)
			if len(res.Attempts) != 0 {
				t.Errorf("attempts before the channel: %v", res.Attempts)
			}
		}
		noFiles(t, dl)
	})

	t.Run("FrameBlocked", func(t *testing.T) {
		ctx, c := open(t, liveTab)
		generate(t, ctx)
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`new MutationObserver((ms) => {
			for (const m of ms) for (const n of m.addedNodes) if (n.localName === 'iframe') n.remove();
		}).observe(document, {childList: true, subtree: true})`)); err != nil {
			t.Fatal(err)
		}
		dl := t.TempDir()
		res, err := c.Element(opCtx(t), capture.CSS("#result-blobvideo"), capture.To(capture.Dir(t.TempDir())), capture.SaveAbove(1), capture.DownloadDir(dl),
			capture.Rungs(capture.RungChannel, capture.RungPage))
		if err != nil {
			t.Fatal(err)
		}
		checkAsset(t, res, "blobvideo", capture.RungPage)
		if len(res.Attempts) != 1 || res.Attempts[0].Rung != capture.RungChannel {
			t.Errorf("attempts %v, want the channel's", res.Attempts)
		}
		noFiles(t, dl)
	})

	t.Run("Cancel", func(t *testing.T) {
		ctx, c := open(t, liveTab)
		generate(t, ctx)
		out := filepath.Join(t.TempDir(), "out")
		cctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		_, err := c.Element(cctx, capture.CSS("#result-blobvideo"), capture.To(capture.Dir(out)), capture.SaveAbove(1),
			capture.Rungs(capture.RungChannel), capture.OnProgress(func(p capture.Progress) {
				if p.Done > 0 {
					cancel()
				}
			}))
		if !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want context.Canceled", err)
		}
		noFiles(t, out)
		if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('iframe').length`)); err != nil || n != 0 {
			t.Errorf("%d frames stay in the page (%v)", n, err)
		}
	})
}

// Plain Chrome has no transfer page: forced, the channel fails and says
// why; the ladder saves as before (runSave).
func TestChannelExec(t *testing.T) {
	ctx, c := open(t, execTab)
	generate(t, ctx)
	_, err := c.Element(opCtx(t), capture.CSS("#result-blobvideo"), capture.To(capture.Dir(t.TempDir())), capture.SaveAbove(1), capture.Rungs(capture.RungChannel))
	if err == nil || !strings.Contains(err.Error(), "no livetab transfer channel") {
		t.Fatalf("got %v, want the missing channel", err)
	}
}
