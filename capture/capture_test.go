package capture_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/capture"
	"github.com/livetab/livetab/internal/browsertest"
)

// TestExec runs the suite on a plain headless Chromium (chromedp's
// ExecAllocator), TestLivetab on the real extension through the bridge.
func TestExec(t *testing.T) {
	browsertest.RequireChromium(t)
	runSuite(t, execTab)
}

func TestLivetab(t *testing.T) {
	browsertest.RequireChromium(t)
	runSuite(t, liveTab)
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// open navigates a new tab to the studio with a Capturer that saw the page
// load, and returns both.
func open(t *testing.T, newTab func(testing.TB) context.Context) (context.Context, *capture.Capturer) {
	t.Helper()
	ctx := newTab(t)
	c, err := capture.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := chromedp.Do(ctx, chromedp.Navigate(fake.URL)); err != nil {
		t.Fatal(err)
	}
	return ctx, c
}

// generate clicks Generate and waits for the studio to finish.
func generate(t *testing.T, ctx context.Context) {
	t.Helper()
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#prompt"), "a red fox in the snow"),
		chromedp.Click(chromedp.CSS("#generate")),
	); err != nil {
		t.Fatal(err)
	}
	waitDone(t, ctx)
}

func waitDone(t *testing.T, ctx context.Context) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, err := chromedp.Run(wctx, chromedp.Poll[bool](`document.getElementById('status').textContent.startsWith('done')`)); err != nil {
		t.Fatalf("the studio did not finish generating: %v", err)
	}
}

func opCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func checkAsset(t *testing.T, res *capture.Result, kind string, rung capture.Rung) {
	t.Helper()
	want, ok := fake.Asset(kind)
	if !ok {
		t.Fatalf("the studio generated no %s", kind)
	}
	if res.SHA256 != want.SHA256 || res.Size != want.Size {
		t.Errorf("%s: got %d bytes sha256 %s, the server generated %d bytes sha256 %s", kind, res.Size, res.SHA256, want.Size, want.SHA256)
	}
	if rung != 0 && res.Rung != rung {
		t.Errorf("%s: captured with rung %s, want %s (attempts: %v)", kind, res.Rung, rung, res.Attempts)
	}
	if res.Location != "" {
		b, err := os.ReadFile(res.Location)
		if err != nil {
			t.Errorf("%s: reading the captured file: %v", kind, err)
		} else if sum(b) != want.SHA256 {
			t.Errorf("%s: the file at %s differs from what the server generated", kind, res.Location)
		}
	}
}

// noFiles checks that a failed capture left nothing in dir.
func noFiles(t *testing.T, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		t.Errorf("a failed capture left %s in the output directory", e.Name())
	}
}

func runSuite(t *testing.T, newTab func(testing.TB) context.Context) {
	t.Run("Studio", func(t *testing.T) {
		ctx, c := open(t, newTab)
		dir := t.TempDir()
		to := capture.To(capture.Dir(dir))

		// Rung 1: the reference image the page loaded while the Capturer
		// watched.
		res, err := c.Element(opCtx(t), capture.CSS("#refimg"), to)
		if err != nil {
			t.Fatal(err)
		}
		if res.Rung != capture.RungBody || res.SHA256 != sum(fake.RefPNG()) || res.MIME != "image/png" || res.Name != "ref.png" {
			t.Errorf("refimg: got %+v, want rung 1, image/png ref.png with the server's bytes", res)
		}
		if res.Width != 96 || res.Height != 64 {
			t.Errorf("refimg: size %d×%d, want 96×64", res.Width, res.Height)
		}

		// A CSS background image.
		res, err = c.Element(opCtx(t), capture.CSS("#bg"), to)
		if err != nil {
			t.Fatal(err)
		}
		if res.SHA256 != sum(fake.BgPNG()) {
			t.Errorf("background: wrong bytes %+v", res)
		}

		// The same image forced through the page (rung 2).
		res, err = c.Element(opCtx(t), capture.CSS("#refimg"), to, capture.Rungs(capture.RungPage))
		if err != nil {
			t.Fatal(err)
		}
		if res.Rung != capture.RungPage || res.SHA256 != sum(fake.RefPNG()) {
			t.Errorf("refimg in page: got %+v", res)
		}

		// URL capture: tracked (rung 1), and a data: URL (rung 2).
		res, err = c.URL(opCtx(t), fake.URL+"/media/ref.png", capture.To(capture.File(filepath.Join(dir, "by-url.png"))))
		if err != nil {
			t.Fatal(err)
		}
		if res.Rung != capture.RungBody || res.Location != filepath.Join(dir, "by-url.png") {
			t.Errorf("URL: got %+v", res)
		}
		res, err = c.URL(opCtx(t), "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==", to)
		if err != nil {
			t.Fatal(err)
		}
		if res.Rung != capture.RungPage || res.MIME != "image/png" || res.Size != 70 {
			t.Errorf("data: URL: got %+v", res)
		}

		// Wait for generation: the image appears as a blob: URL made from
		// a canvas, inside #out, after the Generate click.
		var progress []capture.Progress
		wctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		res, err = c.WaitNew(wctx, capture.Filter{MIME: "image/", Within: "#out", MinWidth: 100}, func(context.Context) error {
			return chromedp.Do(ctx,
				chromedp.SendKeys(chromedp.CSS("#prompt"), "a red fox in the snow"),
				chromedp.Click(chromedp.CSS("#generate")))
		}, to, capture.OnProgress(func(p capture.Progress) { progress = append(progress, p) }))
		if err != nil {
			t.Fatal(err)
		}
		checkAsset(t, res, "image", capture.RungPage)
		if !strings.HasPrefix(res.Source, "blob:") || res.MIME != "image/png" || res.Width != 256 {
			t.Errorf("generated image: got %+v", res)
		}
		// A blob: has no name: the image's alt and the time make one.
		if !regexp.MustCompile(`^result-\d{8}-\d{6}\.png$`).MatchString(res.Name) {
			t.Errorf("generated image named %q, want result-<date>-<time>.png", res.Name)
		}
		if len(progress) == 0 || progress[len(progress)-1].Done != res.Size {
			t.Errorf("progress: got %v", progress)
		}
		waitDone(t, ctx)

		// The canvas itself, encoded again by the browser.
		res, err = c.Element(opCtx(t), capture.CSS("#result-canvas"), to)
		if err != nil {
			t.Fatal(err)
		}
		checkAsset(t, res, "image", capture.RungPage)

		// A video streamed with range requests: the tracked responses are
		// partial (206), so the page reads the whole file.
		res, err = c.Element(opCtx(t), capture.CSS("#result-video"), to, capture.ChunkSize(256<<10))
		if err != nil {
			t.Fatal(err)
		}
		checkAsset(t, res, "video", capture.RungPage)
		if res.MIME != "video/mp4" || !strings.HasSuffix(res.Name, ".mp4") {
			t.Errorf("video: got %+v", res)
		}

		// The same kind of video held as a blob.
		res, err = c.Element(opCtx(t), capture.CSS("#result-blobvideo"), to)
		if err != nil {
			t.Fatal(err)
		}
		checkAsset(t, res, "blobvideo", capture.RungPage)
		if res.MIME != "video/webm" {
			t.Errorf("blob video: MIME %s", res.MIME)
		}

		// The audio clip: whole responses, so rung 1 when Chrome kept the
		// body of the media request, else the page.
		res, err = c.Element(opCtx(t), capture.CSS("#result-audio"), to)
		if err != nil {
			t.Fatal(err)
		}
		checkAsset(t, res, "audio", 0)
		t.Logf("audio came through %s (attempts %v)", res.Rung, res.Attempts)

		// A link to the attachment: the page can read it (rung 2), and the
		// name comes from Content-Disposition.
		res, err = c.Element(opCtx(t), capture.CSS("#download-link"), to)
		if err != nil {
			t.Fatal(err)
		}
		checkAsset(t, res, "download", capture.RungPage)
		if want, _ := fake.Asset("download"); res.Name != want.Name {
			t.Errorf("link: name %q, want %q", res.Name, want.Name)
		}

		// Rung 3: a button whose script navigates to an attachment.
		res, err = c.Element(opCtx(t), capture.CSS("#download"), to)
		if err != nil {
			t.Fatal(err)
		}
		checkAsset(t, res, "download", capture.RungDownload)
		if want, _ := fake.Asset("download"); res.Name != want.Name || res.MIME != "application/zip" {
			t.Errorf("download: got name %q MIME %s, want %q application/zip", res.Name, res.MIME, want.Name)
		}

		// Rung 3 through Download: a blob saved by the page's script.
		res, err = c.Download(opCtx(t), func(context.Context) error {
			return chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#download-blob")))
		}, to)
		if err != nil {
			t.Fatal(err)
		}
		checkAsset(t, res, "blobvideo", capture.RungDownload)
		if !strings.HasPrefix(res.Name, "clip-") {
			t.Errorf("blob download: name %q", res.Name)
		}

		// A download that breaks off ends in a clear error.
		_, err = c.Element(opCtx(t), capture.CSS("#download-broken"), capture.To(capture.Dir(filepath.Join(dir, "broken"))))
		if !errors.Is(err, capture.ErrDownloadFailed) {
			t.Errorf("broken download: got %v, want ErrDownloadFailed", err)
		}
		noFiles(t, filepath.Join(dir, "broken"))
	})

	t.Run("Errors", func(t *testing.T) {
		ctx, c := open(t, newTab)
		dir := filepath.Join(t.TempDir(), "out")
		to := capture.To(capture.Dir(dir))
		// Chrome's copy of a cross-origin response is readable (rung 1)
		// where the page itself may not read it.
		res, err := c.Element(opCtx(t), capture.CSS("#cross"), capture.To(capture.Dir(t.TempDir())))
		if err != nil {
			t.Fatal(err)
		}
		if res.Rung != capture.RungBody || res.SHA256 != sum(fake.RefPNG()) {
			t.Errorf("cross-origin image through rung 1: got %+v", res)
		}
		for _, tc := range []struct {
			ref  capture.Ref
			want error
		}{
			{capture.CSS("#nothing"), capture.ErrNoMedia},
			{capture.CSS("#missing"), capture.ErrNotFound},
			{capture.CSS("#cross"), capture.ErrCrossOrigin},
			{capture.JS(`document.title`), capture.ErrNotFound},
		} {
			_, err := c.Element(opCtx(t), tc.ref, to, capture.Rungs(capture.RungPage, capture.RungDownload))
			if !errors.Is(err, tc.want) {
				t.Errorf("%s: got %v, want %v", tc.ref, err, tc.want)
			} else {
				t.Logf("%s: %v", tc.ref, err)
			}
		}
		// A blob URL the page revoked.
		if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`(async () => {
			const b = new Blob([new Uint8Array(1000)], {type: 'image/png'});
			const img = document.createElement('img');
			img.id = 'revoked';
			img.src = URL.createObjectURL(b);
			document.body.append(img);
			URL.revokeObjectURL(img.src);
		})()`)); err != nil {
			t.Fatal(err)
		}
		_, err = c.Element(opCtx(t), capture.CSS("#revoked"), to)
		if !errors.Is(err, capture.ErrGone) {
			t.Errorf("revoked blob: got %v, want ErrGone", err)
		}
		noFiles(t, dir)
	})

	t.Run("CancelMidTransfer", func(t *testing.T) {
		ctx, c := open(t, newTab)
		generate(t, ctx)
		dir := filepath.Join(t.TempDir(), "out")
		cctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		_, err := c.Element(cctx, capture.CSS("#result-blobvideo"), capture.To(capture.Dir(dir)), capture.ChunkSize(64<<10),
			capture.OnProgress(func(p capture.Progress) { cancel() }))
		if !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want context.Canceled", err)
		}
		noFiles(t, dir)
	})

	t.Run("TabClosedMidTransfer", func(t *testing.T) {
		ctx, c := open(t, newTab)
		generate(t, ctx)
		dir := filepath.Join(t.TempDir(), "out")
		var once bool
		_, err := c.Element(opCtx(t), capture.CSS("#result-blobvideo"), capture.To(capture.Dir(dir)), capture.ChunkSize(64<<10),
			capture.OnProgress(func(p capture.Progress) {
				if !once {
					once = true
					closeTab(ctx)
				}
			}))
		if !errors.Is(err, capture.ErrTabClosed) {
			t.Errorf("got %v, want ErrTabClosed", err)
		} else {
			t.Log(err)
		}
		noFiles(t, dir)
	})

	t.Run("JSReader", func(t *testing.T) {
		// The fallback for browsers that refuse IO.resolveBlob.
		capture.SetNoIORead(true)
		defer capture.SetNoIORead(false)
		ctx, c := open(t, newTab)
		generate(t, ctx)
		res, err := c.Element(opCtx(t), capture.CSS("#result-image"), capture.To(capture.Dir(t.TempDir())), capture.ChunkSize(2000))
		if err != nil {
			t.Fatal(err)
		}
		checkAsset(t, res, "image", capture.RungPage)
	})

	t.Run("WaitResponse", func(t *testing.T) {
		// New media seen as a network response: the audio clip, whole.
		ctx, c := open(t, newTab)
		wctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		res, err := c.WaitNew(wctx, capture.Filter{MIME: "audio/", ResponsesOnly: true, MinBytes: 1000}, func(context.Context) error {
			return chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#generate")))
		}, capture.To(capture.Dir(t.TempDir())))
		if err != nil {
			t.Fatal(err)
		}
		checkAsset(t, res, "audio", 0)
		if !strings.Contains(res.Source, "/media/audio-") || res.MIME != "audio/wav" {
			t.Errorf("got %+v", res)
		}
		// Nothing new comes without a trigger: the wait ends with the
		// context, and says what it waited for.
		sctx, scancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
		defer scancel()
		_, err = c.WaitNew(sctx, capture.Filter{MIME: "image/", MinWidth: 10}, nil)
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no new media") {
			t.Errorf("waiting without a trigger: got %v", err)
		}
	})

	t.Run("WriterSink", func(t *testing.T) {
		_, c := open(t, newTab)
		var buf bytes.Buffer
		res, err := c.Element(opCtx(t), capture.CSS("#refimg"), capture.To(capture.Writer(&buf)), capture.Rungs(capture.RungPage))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), fake.RefPNG()) || res.Location != "" {
			t.Errorf("writer sink: %d bytes, %+v", buf.Len(), res)
		}
	})
}

// closeTab closes the tab of ctx from the browser's side, as a person
// closing it would.
func closeTab(ctx context.Context) {
	id := chromedp.FromContext(ctx).Target.TargetID
	chromedp.CallBrowser(ctx, target.CloseTarget, target.CloseTargetParams{TargetID: id})
}
