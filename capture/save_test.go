package capture_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/capture"
	"github.com/livetab/livetab/livetabcdp"
)

func TestSaveExec(t *testing.T)    { runSave(t, execTab, false) }
func TestSaveLivetab(t *testing.T) { runSave(t, liveTab, true) }

// runSave checks RungSave: the page downloads the blob it holds and the
// file is read from disk, byte for byte the source, with nothing left in
// the download directory; where the page may not download, the slices take
// over.
//
// A person's Chrome lets a page start one download of its own, then asks
// the person ("download multiple files?"); through livetab the extension
// downloads instead (Livetab.downloadBlob), so several saves in one
// document work on both backends. byExtension says the extension
// downloads.
func runSave(t *testing.T, newTab func(testing.TB) context.Context, byExtension bool) {
	t.Run("Media", func(t *testing.T) {
		ctx, c := open(t, newTab)
		generate(t, ctx)
		dl := t.TempDir()
		to := capture.To(capture.Dir(t.TempDir()))
		for _, tc := range []struct{ sel, kind string }{
			{"#result-blobvideo", "blobvideo"}, // the page's blob: URL, downloaded as is
			{"#result-video", "video"},         // range-served, of the page's origin: downloaded as is
			{"#download-link", "download"},     // a download-only file the page can read
		} {
			res, err := c.Element(opCtx(t), capture.CSS(tc.sel), to, capture.Rungs(capture.RungSave), capture.SaveAbove(1), capture.DownloadDir(dl))
			if err != nil {
				t.Fatalf("%s: %v", tc.sel, err)
			}
			checkAsset(t, res, tc.kind, capture.RungSave)
			if tc.kind == "blobvideo" && res.MIME != "video/webm" {
				t.Errorf("blob video: MIME %s", res.MIME)
			}
			if tc.kind == "video" {
				// The browser downloads the page's own http(s) URL itself:
				// the page never reads the whole file (through livetab, a
				// fetch in the page moves every chunk's Network event
				// across the extension).
				src, err := chromedp.Run(ctx, chromedp.Evaluate[string](`new URL(document.querySelector('#result-video').src).pathname`))
				if err != nil {
					t.Fatal(err)
				}
				if reads := fake.WholeReads(src); reads["cors"] > 0 || reads["navigate"] != 1 {
					t.Errorf("the video was read whole %v (by Sec-Fetch-Mode), want once by a download and never by a fetch", reads)
				}
			}
		}
		noFiles(t, dl)
		// Below the threshold the ladder reads slices, as before.
		res, err := c.Element(opCtx(t), capture.CSS("#result-blobvideo"), to, capture.DownloadDir(dl))
		if err != nil {
			t.Fatal(err)
		}
		checkAsset(t, res, "blobvideo", capture.RungPage)
		noFiles(t, dl)
	})

	t.Run("Cancel", func(t *testing.T) {
		ctx, c := open(t, newTab)
		generate(t, ctx)
		for _, sel := range []string{"#result-blobvideo", "#result-video"} {
			cancelSave(t, c, sel)
		}
	})

	t.Run("SandboxedFrame", func(t *testing.T) {
		// A page sandboxed without allow-downloads may not download:
		// the capture falls back to the slices and says so. The
		// extension's download is not the page's, and goes through.
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
		wait := time.Second // spent in full where the page may not download
		if byExtension {
			wait = 10 * time.Second // the extension's download begins at once; generous under load
		}
		res, err := c.Element(opCtx(t), capture.CSS("#v"),
			capture.To(capture.Dir(t.TempDir())), capture.SaveAbove(1), capture.DownloadDir(dl), capture.DownloadStartWait(wait))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case byExtension:
			if res.SHA256 != sum(want) || res.Rung != capture.RungSave {
				t.Errorf("got %s by %s after %v, want sha256 %s by page-download", res.SHA256, res.Rung, res.Attempts, sum(want))
			}
		case res.SHA256 != sum(want) || res.Rung != capture.RungPage || len(res.Attempts) != 1 || res.Attempts[0].Rung != capture.RungSave:
			t.Errorf("got %s by %s after %v, want sha256 %s by in-page after a failed page-download", res.SHA256, res.Rung, res.Attempts, sum(want))
		default:
			t.Logf("fell back after %v: %v", time.Since(start), res.Attempts)
		}
		noFiles(t, dl)
	})
}

// TestDownloadBlobRefuses: Livetab.downloadBlob downloads only a blob: or
// http(s) URL of the session's own tab's origin, asked on that tab's
// session: a client reaches no other page's blobs and no other site with
// the person's cookies.
func TestDownloadBlobRefuses(t *testing.T) {
	ctx, _ := open(t, liveTab)
	own, err := chromedp.Run(ctx, chromedp.Evaluate[string](`URL.createObjectURL(new Blob([new Uint8Array(100)]))`))
	if err != nil {
		t.Fatal(err)
	}
	other := "blob:http://127.0.0.1:1/" + own[strings.LastIndexByte(own, '/')+1:]
	for _, tc := range []struct {
		name    string
		browser bool
		url     string
	}{
		{"another origin's blob", false, other},
		{"another origin's http URL", false, fake.CrossURL + "/media/ref.png"},
		{"a data URL", false, "data:text/plain,hello"},
		{"a file URL", false, "file:///etc/passwd"},
		{"the browser session", true, own},
	} {
		p := livetabcdp.DownloadBlobParams{URL: tc.url}
		if tc.browser {
			_, err = chromedp.CallBrowser(ctx, livetabcdp.DownloadBlob, p)
		} else {
			_, err = chromedp.Call(ctx, livetabcdp.DownloadBlob, p)
		}
		if err == nil {
			t.Errorf("%s: downloaded", tc.name)
		} else {
			t.Logf("%s: %v", tc.name, err)
		}
	}
}

// TestDownloadBlobRedirectedAway: an http(s) URL of the tab's origin that
// redirects to another origin is downloaded by Chrome, but the relay
// cancels it and removes the file: the client gets no other site's bytes.
func TestDownloadBlobRedirectedAway(t *testing.T) {
	tab, c := open(t, liveTab)
	dl := t.TempDir()
	_, err := c.Download(opCtx(t), func(context.Context) error {
		tab, cancel := context.WithTimeout(tab, 20*time.Second)
		defer cancel()
		_, err := chromedp.Call(tab, livetabcdp.DownloadBlob, livetabcdp.DownloadBlobParams{URL: fake.URL + "/away", Filename: "away.png"})
		return err
	}, capture.To(capture.Dir(t.TempDir())), capture.DownloadDir(dl))
	if !errors.Is(err, capture.ErrDownloadFailed) {
		t.Fatalf("got %v, want ErrDownloadFailed (canceled)", err)
	}
	t.Log(err)
	noFiles(t, dl)
	home, _ := os.UserHomeDir()
	deadline := time.Now().Add(5 * time.Second)
	for {
		left, _ := filepath.Glob(filepath.Join(home, "Downloads", "away*.png"))
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the redirected download stayed at %v", left)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestSaveRefusedFallsBack: an extension that refuses to download an
// http(s) URL (one from before it took them) costs the capture nothing but
// an attempt: the page reads the video and saves the copy, the bytes are
// the source's.
func TestSaveRefusedFallsBack(t *testing.T) {
	capture.SetExtensionSaveURL(func(u string) string {
		if strings.HasPrefix(u, "http") {
			return strings.Replace(u, "127.0.0.1", "localhost", 1) // another origin: refused
		}
		return u
	})
	defer capture.SetExtensionSaveURL(nil)
	ctx, c := open(t, liveTab)
	generate(t, ctx)
	dl := t.TempDir()
	// Twice: the refusal must not make the capture think the extension
	// cannot download blobs either (the page would then save once per
	// document, and the second capture read slices).
	for range 2 {
		res, err := c.Element(opCtx(t), capture.CSS("#result-video"), capture.To(capture.Dir(t.TempDir())), capture.SaveAbove(1), capture.DownloadDir(dl))
		if err != nil {
			t.Fatal(err)
		}
		checkAsset(t, res, "video", capture.RungSave)
		// (The second may first try the body of the first one's fetch.)
		if n := len(res.Attempts); n == 0 || res.Attempts[n-1].Rung != capture.RungSave {
			t.Errorf("attempts %v, want the refused download of the URL last", res.Attempts)
		} else {
			t.Log(res.Attempts[n-1].Err)
		}
	}
	noFiles(t, dl)
}

// cancelSave cancels a RungSave capture of sel once bytes move: no file is
// left in the output or the download directory.
func cancelSave(t *testing.T, c *capture.Capturer, sel string) {
	dl, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
	cctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := c.Element(cctx, capture.CSS(sel), capture.To(capture.Dir(out)), capture.ChunkSize(64<<10),
		capture.SaveAbove(1), capture.DownloadDir(dl), capture.Rungs(capture.RungSave),
		capture.OnProgress(func(p capture.Progress) {
			if p.Done > 0 {
				cancel()
			}
		}))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("%s: got %v, want context.Canceled", sel, err)
	}
	noFiles(t, out)
	noFiles(t, dl)
	// Chrome deletes a canceled download's partial file on a thread
	// of its own, after it reports the cancel: look again later.
	time.Sleep(2 * time.Second)
	noFiles(t, out)
	noFiles(t, dl)
}

// TestSaveRefusalIsThisCapturesAlone: the extension refuses a blob it
// cannot download (one the page no longer holds; or, under a flood, too
// many downloads in flight). That refusal is the capture's own: it must
// not make the Capturer take the extension for one without
// Livetab.downloadBlob, which would leave every later capture one page
// download per document, then the slower rungs.
func TestSaveRefusalIsThisCapturesAlone(t *testing.T) {
	ctx, c := open(t, liveTab)
	generate(t, ctx)
	dl := t.TempDir()
	capture.SetExtensionSaveURL(func(u string) string {
		if strings.HasPrefix(u, "blob:") {
			return u[:len(u)-4] + "0000" // a blob the page does not hold
		}
		return u
	})
	res, err := c.Element(opCtx(t), capture.CSS("#result-blobvideo"), capture.To(capture.Dir(t.TempDir())), capture.SaveAbove(1), capture.DownloadDir(dl))
	capture.SetExtensionSaveURL(nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Attempts); n == 0 || res.Attempts[0].Rung != capture.RungSave {
		t.Fatalf("attempts %v, want the refused download first", res.Attempts)
	}
	for i := range 3 {
		res, err := c.Element(opCtx(t), capture.CSS("#result-blobvideo"), capture.To(capture.Dir(t.TempDir())), capture.SaveAbove(1), capture.DownloadDir(dl))
		if err != nil {
			t.Fatal(err)
		}
		if res.Rung != capture.RungSave {
			t.Errorf("capture %d after the refusal: rung %s, attempts %v; want the extension's download", i+1, res.Rung, res.Attempts)
		}
	}
	noFiles(t, dl)
}
