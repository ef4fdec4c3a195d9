package upload_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/internal/browsertest"
	"github.com/livetab/livetab/upload"
)

// TestExec runs the suite on a plain headless Chromium (chromedp's
// ExecAllocator), TestLivetab on the real extension through the bridge.
func TestExec(t *testing.T) {
	browsertest.RequireChromium(t)
	runSuite(t, execTab, upload.InPage)
}

func TestLivetab(t *testing.T) {
	browsertest.RequireChromium(t)
	runSuite(t, liveTab, upload.Channel)
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// pngBytes is a small real PNG (1×1).
var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\xdac\xfc\xcf\xc0P\x0f\x00\x04\x85\x01\x80\x84\xa9\x8c!\x00\x00\x00\x00IEND\xaeB`\x82")

// bigPNG is a PNG header followed by n bytes of filler: a "picture" of any
// size, whose type sniffs as image/png.
func bigPNG(n int) []byte {
	b := append([]byte(nil), pngBytes[:16]...)
	for len(b) < n {
		b = append(b, byte(len(b)*7))
	}
	return b
}

func open(t *testing.T, newTab func(testing.TB) context.Context) context.Context {
	t.Helper()
	ctx := newTab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(fake.URL)); err != nil {
		t.Fatal(err)
	}
	return ctx
}

func opCtx(t *testing.T, ctx context.Context) context.Context {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// received waits for the server to receive uploads named name, n of them.
func received(t *testing.T, via, name string, n int) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		var got []byte
		k := 0
		for _, u := range fake.Uploads() {
			if u.Via == via && u.Name == name {
				got = u.Data
				k++
			}
		}
		if k >= n {
			return got
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the server got %d uploads of %s via %s, want %d", k, name, via, n)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func uploaded(t *testing.T, via, name string) (u struct {
	MIME         string
	LastModified int64
	SHA256       string
}) {
	t.Helper()
	received(t, via, name, 1)
	for _, x := range fake.Uploads() {
		if x.Via == via && x.Name == name {
			u.MIME, u.LastModified, u.SHA256 = x.MIME, x.LastModified, x.SHA256
		}
	}
	return u
}

// runSuite runs the suite on a backend where Auto streams bytes by the
// mode streamed: the transfer channel through livetab, the in-page slices
// on plain Chrome.
func runSuite(t *testing.T, newTab func(testing.TB) context.Context, streamed upload.Mode) {
	t.Run("InputInPage", func(t *testing.T) {
		ctx := open(t, newTab)
		name := "ref-" + t.Name()[:4] + ".png"
		name = strings.ReplaceAll(name, "/", "_")
		mod := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
		f := upload.Bytes(name, pngBytes)
		f.ModTime = mod
		res, err := upload.Files(opCtx(t, ctx), upload.CSS("#ref"), []upload.File{f})
		if err != nil {
			t.Fatal(err)
		}
		// Bytes have no path, so Auto streams them.
		if res.Mode != streamed || res.Fallback == "" || len(res.Files) != 1 {
			t.Errorf("got %+v, want a %s upload with a fallback reason", res, streamed)
		}
		u := uploaded(t, "input", name)
		if u.SHA256 != sum(pngBytes) || u.MIME != "image/png" || u.LastModified != mod.UnixMilli() {
			t.Errorf("the server got %+v, want the PNG's bytes, image/png, lastModified %d", u, mod.UnixMilli())
		}
		if res.Files[0].SHA256 != sum(pngBytes) || res.Files[0].Size != int64(len(pngBytes)) {
			t.Errorf("result %+v", res.Files[0])
		}
	})

	t.Run("InputNative", func(t *testing.T) {
		ctx := open(t, newTab)
		path := filepath.Join(t.TempDir(), "native-ref.png")
		data := bigPNG(300 << 10)
		os.WriteFile(path, data, 0o644)
		res, err := upload.Files(opCtx(t, ctx), upload.CSS("#ref"), []upload.File{upload.Path(path)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Mode != upload.Native {
			t.Errorf("Auto took %s (%s), want native: plain Chrome and the test extension can read files", res.Mode, res.Fallback)
		}
		if u := uploaded(t, "input", "native-ref.png"); u.SHA256 != sum(data) {
			t.Errorf("the server got sha256 %s, want %s", u.SHA256, sum(data))
		}
		if res.Files[0].SHA256 != sum(data) || res.Files[0].MIME != "image/png" {
			t.Errorf("result %+v", res.Files[0])
		}
	})

	t.Run("PathsChecked", func(t *testing.T) {
		// A FIFO fails at once (an open of it waited for a writer, out of
		// any context's reach); a link out of Within's directory fails;
		// a file another user may swap before the browser opens it by its
		// path goes as bytes.
		ctx := open(t, newTab)
		dir := t.TempDir()
		fifo := filepath.Join(dir, "report.pdf")
		if err := mkfifo(fifo); err != nil && !errors.Is(err, errors.ErrUnsupported) {
			t.Fatal(err)
		} else if err == nil {
			if _, err := upload.Files(opCtx(t, ctx), upload.CSS("#ref"), []upload.File{upload.Path(fifo)}); !errors.Is(err, upload.ErrNotRegular) {
				t.Errorf("a FIFO: %v, want ErrNotRegular", err)
			}
		}
		inside := filepath.Join(dir, "in")
		os.Mkdir(inside, 0o700)
		secret := filepath.Join(dir, "secret.png")
		os.WriteFile(secret, pngBytes, 0o600)
		link := filepath.Join(inside, "link.png")
		os.Symlink(secret, link)
		if _, err := upload.Files(opCtx(t, ctx), upload.CSS("#ref"), []upload.File{upload.Path(link)}, upload.Within(inside)); !errors.Is(err, upload.ErrOutside) {
			t.Errorf("a link out of the directory: %v, want ErrOutside", err)
		}
		shared := filepath.Join(dir, "shared")
		os.Mkdir(shared, 0o700)
		os.Chmod(shared, 0o777)
		path := filepath.Join(shared, "shared-ref.png")
		os.WriteFile(path, pngBytes, 0o644)
		res, err := upload.Files(opCtx(t, ctx), upload.CSS("#ref"), []upload.File{upload.Path(path)}, upload.Within(shared))
		if err != nil {
			t.Fatal(err)
		}
		if res.Mode != streamed || !strings.Contains(res.Fallback, "another user may change") {
			t.Errorf("a file in a directory others may write: %s (%s), want %s with the reason", res.Mode, res.Fallback, streamed)
		}
		if u := uploaded(t, "input", "shared-ref.png"); u.SHA256 != sum(pngBytes) {
			t.Errorf("the server got sha256 %s, want %s", u.SHA256, sum(pngBytes))
		}
	})

	t.Run("InputNativeDisabled", func(t *testing.T) {
		// The fallback path for a file on disk, with the native path
		// forced off.
		ctx := open(t, newTab)
		path := filepath.Join(t.TempDir(), "forced-ref.png")
		data := bigPNG(2<<20 + 12345)
		os.WriteFile(path, data, 0o644)
		var last upload.Progress
		res, err := upload.Files(opCtx(t, ctx), upload.CSS("#ref"), []upload.File{upload.Path(path)},
			upload.WithMode(upload.InPage), upload.OnProgress(func(p upload.Progress) { last = p }))
		if err != nil {
			t.Fatal(err)
		}
		if res.Mode != upload.InPage || last.Done != int64(len(data)) || last.Total != int64(len(data)) {
			t.Errorf("got %+v, last progress %+v", res, last)
		}
		if u := uploaded(t, "input", "forced-ref.png"); u.SHA256 != sum(data) {
			t.Errorf("the server got sha256 %s, want %s", u.SHA256, sum(data))
		}
	})

	t.Run("Multiple", func(t *testing.T) {
		ctx := open(t, newTab)
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "b.bin"), []byte("second file"), 0o644)
		third := bytes.Repeat([]byte("third "), 50000)
		files := []upload.File{
			upload.Bytes("a.txt", []byte("first file")),
			upload.Path(filepath.Join(dir, "b.bin")),
			upload.Reader("c.txt", bytes.NewReader(third), -1),
		}
		res, err := upload.Files(opCtx(t, ctx), upload.CSS("#multi"), files, upload.ChunkSize(64<<10))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Files) != 3 || res.Mode != upload.InPage {
			t.Fatalf("got %+v", res)
		}
		for name, want := range map[string][]byte{"a.txt": []byte("first file"), "b.bin": []byte("second file"), "c.txt": third} {
			if got := received(t, "multi", name, 1); !bytes.Equal(got, want) {
				t.Errorf("%s: the server got %q, want %d bytes", name, got, len(want))
			}
		}
	})

	t.Run("Drop", func(t *testing.T) {
		ctx := open(t, newTab)
		data := bigPNG(1<<20 + 7)
		res, err := upload.Drop(opCtx(t, ctx), upload.CSS("#drop"), []upload.File{
			upload.Bytes("dropped.png", data), upload.Bytes("dropped2.png", pngBytes),
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Files) != 2 || res.Mode != streamed {
			t.Fatalf("got %+v, want %s", res, streamed)
		}
		if u := uploaded(t, "drop", "dropped.png"); u.SHA256 != sum(data) {
			t.Errorf("drop: the server got sha256 %s, want %s", u.SHA256, sum(data))
		}
		if got := received(t, "drop", "dropped2.png", 1); !bytes.Equal(got, pngBytes) {
			t.Errorf("drop 2: the server got %d bytes", len(got))
		}
	})

	t.Run("TrustedDrop", func(t *testing.T) {
		// Files on disk are dragged by the browser itself: trusted
		// events, which a drop zone that ignores synthetic ones takes.
		ctx := open(t, newTab)
		data := bigPNG(1<<20 + 13)
		path := filepath.Join(t.TempDir(), "trusted.png")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := upload.Drop(opCtx(t, ctx), upload.CSS("#trusted-drop"), []upload.File{upload.Path(path)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Mode != upload.Native || len(res.Files) != 1 || res.Files[0].SHA256 != sum(data) || res.Files[0].Size != int64(len(data)) {
			t.Errorf("got %+v, want the native drop of %d bytes", res, len(data))
		}
		if u := uploaded(t, "trusted-drop", "trusted.png"); u.SHA256 != sum(data) {
			t.Errorf("trusted drop: the server got sha256 %s, want %s", u.SHA256, sum(data))
		}
		// Bytes have no path: synthetic events, which this zone ignores.
		_, err = upload.Drop(opCtx(t, ctx), upload.CSS("#trusted-drop"), []upload.File{upload.Bytes("x.png", pngBytes)})
		if !errors.Is(err, upload.ErrRejected) {
			t.Errorf("bytes onto the trusted-only zone: got %v, want ErrRejected", err)
		}
		// A box that takes no drops gets none, and the browser does not
		// open the file in the tab instead.
		_, err = upload.Drop(opCtx(t, ctx), upload.CSS("#nodrop"), []upload.File{upload.Path(path)})
		if !errors.Is(err, upload.ErrRejected) {
			t.Errorf("a path onto #nodrop: got %v, want ErrRejected", err)
		}
		url, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`))
		if err != nil || url != fake.URL+"/" {
			t.Errorf("after the refused drop the tab shows %q (%v), want %q", url, err, fake.URL+"/")
		}
	})

	t.Run("Paste", func(t *testing.T) {
		ctx := open(t, newTab)
		res, err := upload.Paste(opCtx(t, ctx), upload.CSS("#paste"), []upload.File{upload.Bytes("pasted.png", pngBytes)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Mode != streamed {
			t.Errorf("paste took %s, want %s", res.Mode, streamed)
		}
		if u := uploaded(t, "paste", "pasted.png"); u.SHA256 != sum(pngBytes) || u.MIME != "image/png" {
			t.Errorf("paste: the server got %+v", u)
		}
	})

	t.Run("Rejections", func(t *testing.T) {
		ctx := open(t, newTab)
		png := upload.Bytes("x.png", pngBytes)
		for _, tc := range []struct {
			name  string
			do    func(ctx context.Context) error
			want  error
			words string
		}{
			{"disabled", func(ctx context.Context) error {
				_, err := upload.Files(ctx, upload.CSS("#disabled"), []upload.File{png})
				return err
			}, upload.ErrRejected, "disabled"},
			{"accept", func(ctx context.Context) error {
				_, err := upload.Files(ctx, upload.CSS("#ref"), []upload.File{upload.Bytes("notes.txt", []byte("hello"))})
				return err
			}, upload.ErrRejected, "accepts"},
			{"multiple", func(ctx context.Context) error {
				_, err := upload.Files(ctx, upload.CSS("#ref"), []upload.File{png, png})
				return err
			}, upload.ErrRejected, "one file"},
			{"page size limit", func(ctx context.Context) error {
				_, err := upload.Files(ctx, upload.CSS("#small"), []upload.File{upload.Bytes("big.png", bigPNG(100<<10))})
				return err
			}, upload.ErrRejected, "too large"},
			{"no drop zone", func(ctx context.Context) error {
				_, err := upload.Drop(ctx, upload.CSS("#nodrop"), []upload.File{png})
				return err
			}, upload.ErrRejected, "drops"},
			{"not an input", func(ctx context.Context) error {
				_, err := upload.Files(ctx, upload.CSS("#prompt"), []upload.File{png})
				return err
			}, upload.ErrNotFileInput, "not a file input"},
			{"missing", func(ctx context.Context) error {
				_, err := upload.Files(ctx, upload.CSS("#missing"), []upload.File{png})
				return err
			}, upload.ErrNotFound, "nothing matches"},
			{"native bytes", func(ctx context.Context) error {
				_, err := upload.Files(ctx, upload.CSS("#multi"), []upload.File{png}, upload.WithMode(upload.Native))
				return err
			}, upload.ErrNativeUnavailable, "not a file on disk"},
		} {
			err := tc.do(opCtx(t, ctx))
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.words) {
				t.Errorf("%s: got %v, want %v mentioning %q", tc.name, err, tc.want, tc.words)
			} else {
				t.Logf("%s: %v", tc.name, err)
			}
		}
		for _, u := range fake.Uploads() {
			if u.Name == "big.png" || u.Name == "notes.txt" {
				t.Errorf("a rejected file reached the server: %+v", u)
			}
		}
	})

	t.Run("Cancel", func(t *testing.T) {
		ctx := open(t, newTab)
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		_, err := upload.Files(cctx, upload.CSS("#multi"), []upload.File{upload.Bytes("cancelled.bin", make([]byte, 4<<20))},
			upload.ChunkSize(256<<10), upload.OnProgress(func(upload.Progress) { cancel() }))
		if !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want context.Canceled", err)
		}
		time.Sleep(200 * time.Millisecond) // room for a wrongly finished upload to show up
		for _, u := range fake.Uploads() {
			if u.Name == "cancelled.bin" {
				t.Errorf("a cancelled upload reached the server")
			}
		}
		// Nothing stays in the page: no transfer frame, no file.
		left, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('iframe').length + document.querySelector('#multi').files.length`))
		if err != nil || left != 0 {
			t.Errorf("the page keeps %d frames or files after the cancel (%v)", left, err)
		}
	})

	t.Run("ChannelBlocked", func(t *testing.T) {
		// A page that removes every frame added to it keeps the transfer
		// frame from loading: the bytes go in slices instead.
		ctx := open(t, newTab)
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`new MutationObserver((ms) => {
			for (const m of ms) for (const n of m.addedNodes) if (n.localName === 'iframe') n.remove();
		}).observe(document, {childList: true, subtree: true})`)); err != nil {
			t.Fatal(err)
		}
		data := bigPNG(1<<20 + 99)
		res, err := upload.Files(opCtx(t, ctx), upload.CSS("#multi"), []upload.File{upload.Bytes("blocked.png", data)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Mode != upload.InPage || !strings.Contains(res.Fallback, "transfer") && streamed == upload.Channel {
			t.Errorf("got %+v, want in-page slices and why the channel did not run", res)
		}
		if u := uploaded(t, "multi", "blocked.png"); u.SHA256 != sum(data) || res.Files[0].SHA256 != sum(data) {
			t.Errorf("the server got sha256 %s, want %s", u.SHA256, sum(data))
		}
	})

	t.Run("TabClosed", func(t *testing.T) {
		ctx := open(t, newTab)
		var once bool
		_, err := upload.Files(opCtx(t, ctx), upload.CSS("#multi"), []upload.File{upload.Bytes("closed.bin", make([]byte, 4<<20))},
			upload.ChunkSize(256<<10), upload.OnProgress(func(upload.Progress) {
				if !once {
					once = true
					closeTab(ctx)
				}
			}))
		if !errors.Is(err, upload.ErrTabClosed) {
			t.Errorf("got %v, want ErrTabClosed", err)
		} else {
			t.Log(err)
		}
	})
}

// closeTab closes the tab of ctx from the browser's side, as a person
// closing it would.
func closeTab(ctx context.Context) {
	id := chromedp.FromContext(ctx).Target.TargetID
	chromedp.CallBrowser(ctx, target.CloseTarget, target.CloseTargetParams{TargetID: id})
}
