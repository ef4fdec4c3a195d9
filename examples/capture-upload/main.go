// Command capture-upload runs the media flow of a generation site against a
// tiny site of its own: type a prompt, upload a reference image, click
// Generate, wait for the result, and take the generated image and its
// download home as files, checking each against what the server made.
//
// It launches a headless Chromium with the livetab extension, as in the
// quickstart; with your own Chrome, load the extension once and keep the
// rest. It imports only livetab's public packages: copy it and point it at
// your site.
//
//	go run ./examples/capture-upload -out /tmp/studio-out
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/bridge"
	"github.com/livetab/livetab/capture"
	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/extension"
	"github.com/livetab/livetab/upload"
)

func main() {
	out := flag.String("out", "", "directory for the captured files (default: a new temporary directory)")
	flag.Parse()
	if err := run(*out); err != nil {
		log.Fatal(err)
	}
}

func run(out string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	site, err := startSite()
	if err != nil {
		return err
	}
	defer site.srv.Close()
	fmt.Println("the site at", site.url)

	work, err := os.MkdirTemp("", "livetab-capture-upload-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if out == "" {
		if out, err = os.MkdirTemp("", "studio-out-"); err != nil {
			return err
		}
	}

	// The bridge, the extension written out for it, and a Chromium with it.
	b, err := bridge.Listen(ctx, bridge.Options{Addr: "127.0.0.1:0", Token: bridge.NewToken()})
	if err != nil {
		return err
	}
	extDir := filepath.Join(work, "extension")
	if err := extension.Write(extDir, extension.Config{URL: b.URL(), Token: b.Token()}); err != nil {
		return err
	}
	browser, err := extension.Launch(ctx, extDir, extension.LaunchOptions{Headless: true, UserDataDir: filepath.Join(work, "profile")})
	if err != nil {
		return err
	}
	defer browser.Close()
	b.Watch(browser) // if it dies, fail at once with its reason
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	err = b.WaitConnected(wctx)
	wcancel()
	if err != nil {
		return fmt.Errorf("the extension did not connect: %w", err)
	}
	allocCtx, cancelAlloc := extcdp.NewAllocator(ctx, b)
	defer cancelAlloc()
	tab, cancelTab := chromedp.NewContext(allocCtx)
	defer cancelTab()

	// Watch the tab before the page loads, so responses can be taken from
	// Chrome's own copy (rung 1).
	c, err := capture.New(tab, capture.To(capture.Dir(out)))
	if err != nil {
		return err
	}
	defer c.Close()
	if err := chromedp.Do(tab,
		chromedp.Navigate(site.url),
		chromedp.SendKeys(chromedp.CSS("#prompt"), "a lighthouse at dusk, oil painting"),
	); err != nil {
		return err
	}

	// The reference image: a file on disk. Auto uses DOM.setFileInputFiles
	// when the extension may read local files, and streams the bytes
	// otherwise. The page posts what it got to the site.
	refPNG := picture(64, 1)
	ref := filepath.Join(work, "reference.png")
	if err := os.WriteFile(ref, refPNG, 0o644); err != nil {
		return err
	}
	up, err := upload.Files(tab, upload.CSS("#ref"), []upload.File{upload.Path(ref)})
	if err != nil {
		return err
	}
	fmt.Printf("uploaded %s (%d bytes) %s\n", up.Files[0].Name, up.Files[0].Size, up.Mode)
	select {
	case got := <-site.uploads:
		fmt.Printf("the site received %d bytes, %s\n", len(got), same(sum(got), sum(refPNG)))
	case <-ctx.Done():
		return fmt.Errorf("the page posted no upload: %w", ctx.Err())
	}

	// Generate, and wait for a new image in the results pane.
	gctx, gcancel := context.WithTimeout(ctx, time.Minute)
	img, err := c.WaitNew(gctx, capture.Filter{MIME: "image/", Within: "#out", MinWidth: 64}, func(context.Context) error {
		return chromedp.Do(tab, chromedp.Click(chromedp.CSS("#generate")))
	})
	gcancel()
	if err != nil {
		return err
	}
	report("image", img, site.result)

	// The download link, which comes as an attachment.
	if err := chromedp.Do(tab, chromedp.WaitVisible(chromedp.CSS("#download"))); err != nil {
		return err
	}
	dl, err := c.Element(ctx, capture.CSS("#download"))
	if err != nil {
		return err
	}
	report("download", dl, site.result)
	fmt.Println("files in", out)
	return nil
}

// site is a tiny generation site: a prompt, a file input whose file the page
// posts to /upload, and a Generate button that shows /result.png after a
// moment, with a link to download it.
type site struct {
	srv     *http.Server
	url     string
	result  []byte
	uploads chan []byte
}

const sitePage = `<!doctype html>
<html><head><meta charset="utf-8"><title>Studio</title></head>
<body>
<label>Prompt <textarea id="prompt" rows="2" cols="40"></textarea></label>
<p><label>Reference image <input id="ref" type="file" accept="image/*"></label></p>
<button id="generate">Generate</button>
<p id="status">idle</p>
<div id="out"></div>
<script>
  const $ = (id) => document.getElementById(id);
  $('ref').addEventListener('change', async (e) => {
    const r = await fetch('/upload', { method: 'POST', body: e.target.files[0] });
    $('status').textContent = 'uploaded: ' + r.status;
  });
  $('generate').addEventListener('click', () => {
    $('status').textContent = 'generating';
    setTimeout(() => {
      const n = Date.now();
      $('out').innerHTML = '<img alt="result" src="/result.png?n=' + n + '">' +
        '<p><a id="download" href="/result.png?n=' + n + '&download=1">Download</a></p>';
      $('status').textContent = 'done';
    }, 1500);
  });
</script>
</body></html>`

func startSite() (*site, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &site{url: "http://" + ln.Addr().String() + "/", result: picture(256, 2), uploads: make(chan []byte, 4)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, sitePage)
	})
	mux.HandleFunc("POST /upload", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		select {
		case s.uploads <- b:
		default:
		}
	})
	mux.HandleFunc("GET /result.png", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("download") != "" {
			w.Header().Set("Content-Disposition", `attachment; filename="lighthouse.png"`)
		}
		w.Header().Set("Content-Type", "image/png")
		w.Write(s.result)
	})
	s.srv = &http.Server{Handler: mux}
	go s.srv.Serve(ln)
	return s, nil
}

// picture makes a size×size PNG, a gradient that differs with seed.
func picture(size, seed int) []byte {
	m := image.NewRGBA(image.Rect(0, 0, size, size))
	for y := range size {
		for x := range size {
			m.Set(x, y, color.RGBA{uint8(x * 255 / size), uint8(y * 255 / size), uint8(seed * 80), 255})
		}
	}
	var b bytes.Buffer
	png.Encode(&b, m)
	return b.Bytes()
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func same(got, want string) string {
	if got == want {
		return "matches"
	}
	return "DIFFERS from " + want
}

func report(kind string, r *capture.Result, want []byte) {
	fmt.Printf("%-8s %-24s %-16s %9d bytes via %-13s sha256 %.16s… %s the server's\n  -> %s\n",
		kind, r.Name, r.MIME, r.Size, r.Rung, r.SHA256, same(r.SHA256, sum(want)), r.Location)
}
