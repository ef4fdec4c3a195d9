// Command capture-upload runs the whole media flow of a generation site
// against a local fake studio: type a prompt, upload a reference image, click
// Generate, wait for the result, and take the generated image, video and
// download home as files, checking each against what the server made.
//
// It launches a headless Chromium with the livetab extension, as in the
// quickstart; with your own Chrome, load the extension once and keep the
// rest.
//
//	go run ./examples/capture-upload -out /tmp/studio-out
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/bridge"
	"github.com/livetab/livetab/capture"
	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/extension"
	"github.com/livetab/livetab/internal/studio"
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

	fake := studio.New(studio.Options{Delay: 2 * time.Second})
	defer fake.Close()
	fmt.Println("fake studio at", fake.URL)

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
		chromedp.Navigate(fake.URL),
		chromedp.SendKeys(chromedp.CSS("#prompt"), "a lighthouse at dusk, oil painting"),
	); err != nil {
		return err
	}

	// The reference image: a file on disk. Auto uses DOM.setFileInputFiles
	// when the extension may read local files, and streams the bytes
	// otherwise.
	ref := filepath.Join(work, "reference.png")
	if err := os.WriteFile(ref, fake.RefPNG(), 0o644); err != nil {
		return err
	}
	up, err := upload.Files(tab, upload.CSS("#ref"), []upload.File{upload.Path(ref)})
	if err != nil {
		return err
	}
	fmt.Printf("uploaded %s (%d bytes) %s\n", up.Files[0].Name, up.Files[0].Size, up.Mode)
	if _, err := fake.WaitUploads(ctx, 1); err != nil {
		return err
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
	report(fake, "image", img)

	// The rest of the results, once the studio has shown them.
	if err := chromedp.Do(tab, chromedp.WaitVisible(chromedp.CSS("#download"))); err != nil {
		return err
	}
	video, err := c.Element(ctx, capture.CSS("#result-video"), capture.OnProgress(func(p capture.Progress) {
		fmt.Printf("\r  video: %d / %d bytes", p.Done, p.Total)
	}))
	fmt.Println()
	if err != nil {
		return err
	}
	report(fake, "video", video)
	dl, err := c.Element(ctx, capture.CSS("#download"))
	if err != nil {
		return err
	}
	report(fake, "download", dl)
	fmt.Println("files in", out)
	return nil
}

func report(fake *studio.Studio, kind string, r *capture.Result) {
	want, _ := fake.Asset(kind)
	check := "matches the server"
	if r.SHA256 != want.SHA256 {
		check = "DIFFERS from the server's " + want.SHA256
	}
	fmt.Printf("%-8s %-24s %-16s %9d bytes via %-13s sha256 %.16s… %s\n  -> %s\n",
		kind, r.Name, r.MIME, r.Size, r.Rung, r.SHA256, check, r.Location)
}
