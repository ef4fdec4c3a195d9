package capture_test

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/capture"
)

func TestSaveExec(t *testing.T)    { runSave(t, execTab, false) }
func TestSaveLivetab(t *testing.T) { runSave(t, liveTab, true) }

// runSave checks RungSave: the page downloads the blob it holds and the
// file is read from disk, byte for byte the source, with nothing left in
// the download directory; where the page may not download, the slices take
// over.
//
// limited says the browser lets a page make one download of its own per
// document, as a person's Chrome does (livetab); plain Chrome under
// Browser.setDownloadBehavior lets it make any number.
func runSave(t *testing.T, newTab func(testing.TB) context.Context, limited bool) {
	t.Run("Media", func(t *testing.T) {
		var (
			ctx context.Context
			c   *capture.Capturer
		)
		dl := t.TempDir()
		to := capture.To(capture.Dir(t.TempDir()))
		for _, tc := range []struct{ sel, kind string }{
			{"#result-blobvideo", "blobvideo"}, // the page's blob: URL, downloaded as is
			{"#result-video", "video"},         // range-served: read into a blob, then saved
			{"#download-link", "download"},     // a download-only file the page can read
		} {
			if c == nil || limited {
				ctx, c = open(t, newTab)
				generate(t, ctx)
			}
			res, err := c.Element(opCtx(t), capture.CSS(tc.sel), to, capture.Rungs(capture.RungSave), capture.SaveAbove(1), capture.DownloadDir(dl))
			if err != nil {
				t.Fatalf("%s: %v", tc.sel, err)
			}
			checkAsset(t, res, tc.kind, capture.RungSave)
			if tc.kind == "blobvideo" && res.MIME != "video/webm" {
				t.Errorf("blob video: MIME %s", res.MIME)
			}
		}
		noFiles(t, dl)
		// A second page-download in one document would make a person's
		// Chrome ask them: the slices read it instead, and say why.
		res, err := c.Element(opCtx(t), capture.CSS("#result-blobvideo"), to, capture.SaveAbove(1), capture.DownloadDir(dl))
		if err != nil {
			t.Fatal(err)
		}
		if limited {
			checkAsset(t, res, "blobvideo", capture.RungPage)
			if len(res.Attempts) != 1 || res.Attempts[0].Rung != capture.RungSave {
				t.Errorf("second save in a document: attempts %v, want one page-download", res.Attempts)
			}
		} else {
			checkAsset(t, res, "blobvideo", capture.RungSave)
		}
		// Below the threshold the ladder reads slices, as before.
		res, err = c.Element(opCtx(t), capture.CSS("#result-blobvideo"), to, capture.DownloadDir(dl))
		if err != nil {
			t.Fatal(err)
		}
		checkAsset(t, res, "blobvideo", capture.RungPage)
		noFiles(t, dl)
	})

	t.Run("Cancel", func(t *testing.T) {
		ctx, c := open(t, newTab)
		generate(t, ctx)
		dl, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
		cctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		_, err := c.Element(cctx, capture.CSS("#result-blobvideo"), capture.To(capture.Dir(out)), capture.ChunkSize(64<<10),
			capture.SaveAbove(1), capture.DownloadDir(dl), capture.Rungs(capture.RungSave),
			capture.OnProgress(func(p capture.Progress) {
				if p.Done > 0 {
					cancel()
				}
			}))
		if !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want context.Canceled", err)
		}
		noFiles(t, out)
		noFiles(t, dl)
		// Chrome deletes a canceled download's partial file on a thread
		// of its own, after it reports the cancel: look again later.
		time.Sleep(2 * time.Second)
		noFiles(t, out)
		noFiles(t, dl)
	})

	t.Run("SandboxedFrame", func(t *testing.T) {
		// A page sandboxed without allow-downloads may not download:
		// the capture falls back to the slices and says so.
		ctx, c := open(t, newTab)
		const n = 3<<20 + 7
		want := make([]byte, n)
		for i := range want {
			want[i] = byte(i * 31)
		}
		if err := chromedp.Do(ctx, chromedp.Navigate(fake.URL+"/sandboxed"), chromedp.Evaluate[chromedp.Void](`{
			const d = new Uint8Array(`+strconv.Itoa(n)+`);
			for (let i = 0; i < d.length; i++) d[i] = (i * 31) & 255;
			document.getElementById('v').src = URL.createObjectURL(new Blob([d], {type: 'video/webm'}));
		}`)); err != nil {
			t.Fatal(err)
		}
		dl := t.TempDir()
		start := time.Now()
		res, err := c.Element(opCtx(t), capture.CSS("#v"),
			capture.To(capture.Dir(t.TempDir())), capture.SaveAbove(1), capture.DownloadDir(dl), capture.DownloadStartWait(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if res.SHA256 != sum(want) || res.Rung != capture.RungPage || len(res.Attempts) != 1 || res.Attempts[0].Rung != capture.RungSave {
			t.Errorf("got %s by %s after %v, want sha256 %s by in-page after a failed page-download", res.SHA256, res.Rung, res.Attempts, sum(want))
		}
		t.Logf("fell back after %v: %v", time.Since(start), res.Attempts)
		noFiles(t, dl)
	})
}
