package capture_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/capture"
)

// Through livetab a big blob the browser may not download goes through the
// transfer channel: the extension's transfer page posts it to the relay,
// nothing is downloaded, the bytes are the source's, read from the relay's
// file of the transfer (Livetab.transferFile), which is gone afterwards. A
// file that is not the relay's own is read through the relay instead. A
// page that keeps the frame from loading gets the slices instead; a cancel
// leaves no file and no frame.
func TestChannelLivetab(t *testing.T) {
	t.Run("Media", func(t *testing.T) {
		ctx, c := open(t, liveTab)
		generate(t, ctx)
		paths := recordPaths(t)
		before := capture.TransferFiles()
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
		if n := capture.TransferFiles() - before; n != 3 {
			t.Errorf("%d of 3 captures read the relay's file", n)
		}
		gone(t, *paths)
	})

	t.Run("NotTheRelaysFile", func(t *testing.T) {
		ctx, c := open(t, liveTab)
		generate(t, ctx)
		// What a squatter on the endpoint, or a relay of another user,
		// might answer: a link to the file, the file in a directory
		// others may open, another name.
		for _, tc := range []struct {
			name    string
			rewrite func(t *testing.T, path string) string
		}{
			{"Symlink", func(t *testing.T, path string) string {
				p := filepath.Join(t.TempDir(), filepath.Base(path))
				if err := os.Symlink(path, p); err != nil {
					t.Fatal(err)
				}
				return p
			}},
			{"OpenDirectory", func(t *testing.T, path string) string {
				d := t.TempDir()
				os.Chmod(d, 0o755)
				p := filepath.Join(d, filepath.Base(path))
				if err := os.Link(path, p); err != nil {
					t.Fatal(err)
				}
				return p
			}},
			{"OtherName", func(t *testing.T, path string) string {
				return filepath.Join(filepath.Dir(path), "livetab-transfer-other")
			}},
			{"Relative", func(t *testing.T, path string) string { return filepath.Base(path) }},
		} {
			t.Run(tc.name, func(t *testing.T) {
				capture.SetTransferFilePath(func(p string) string { return tc.rewrite(t, p) })
				defer capture.SetTransferFilePath(nil)
				before := capture.TransferFiles()
				res, err := c.Element(opCtx(t), capture.CSS("#result-blobvideo"), capture.To(capture.Dir(t.TempDir())), capture.SaveAbove(1), capture.Rungs(capture.RungChannel))
				if err != nil {
					t.Fatal(err)
				}
				checkAsset(t, res, "blobvideo", capture.RungChannel)
				if n := capture.TransferFiles() - before; n != 0 {
					t.Errorf("the capture read a file that is not the relay's")
				}
			})
		}
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
		paths := recordPaths(t)
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
		if len(*paths) != 1 {
			t.Errorf("the cancelled capture asked for %d files, want 1", len(*paths))
		}
		gone(t, *paths)
	})
}

// recordPaths notes the paths of the relay's transfer files the captures
// are given, checking that each is in a directory of this user alone.
func recordPaths(t *testing.T) *[]string {
	var paths []string
	capture.SetTransferFilePath(func(p string) string {
		if fi, err := os.Lstat(filepath.Dir(p)); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("the transfer's file %s is in a directory of mode %v (%v), want 0700", p, fi.Mode(), err)
		}
		paths = append(paths, p)
		return p
	})
	t.Cleanup(func() { capture.SetTransferFilePath(nil) })
	return &paths
}

// gone checks that the relay removed the files once their captures ended.
func gone(t *testing.T, paths []string) {
	t.Helper()
	if len(paths) == 0 {
		t.Error("no capture was given the relay's file")
	}
	for _, p := range paths {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("the relay's file %s stays after its capture", p)
		}
	}
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
