package extcdp_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/livetabcdp"
)

// The file of a transfer from the page (Livetab.transferFile): only the
// client that opened the transfer learns its path; the file is in a
// directory of the person's user alone, named from the token and never
// from what a client or a page sends; it goes when the transfer is closed
// or its client leaves, while a reader that opened it keeps its bytes.
func TestRedTeamTransferFile(t *testing.T) {
	ctx := newTab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(site.URL+"/form?transfer-file")); err != nil {
		t.Fatal(err)
	}
	other := newTab(t)
	if err := chromedp.Do(other, chromedp.Navigate(site.URL+"/form?transfer-file-other")); err != nil {
		t.Fatal(err)
	}
	secret := []byte(strings.Repeat("secret bytes ", 80))
	size := int64(len(secret))

	// A client may not choose where the bytes go: a path among the params
	// is ignored.
	elsewhere := filepath.Join(t.TempDir(), "chosen")
	openRaw := cdp.Command[map[string]any, livetabcdp.OpenTransferResult]{Method: livetabcdp.CommandOpenTransfer}
	up, err := chromedp.Call(ctx, openRaw, map[string]any{"direction": livetabcdp.TransferFromPage, "size": size, "path": elsewhere, "dir": filepath.Dir(elsewhere)})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(up.FrameURL, "livetab-transfer") || strings.Contains(up.FrameURL, os.TempDir()) {
		t.Errorf("the frame's URL, which the page sees, names the file: %s", up.FrameURL)
	}

	// Another client learns nothing of it, before or after the post.
	stranger := func(when string) {
		for _, off := range []int64{0, size} {
			rctx, cancel := context.WithTimeout(other, 3*time.Second)
			r, err := chromedp.Call(rctx, livetabcdp.TransferFile, livetabcdp.TransferFileParams{Transfer: up.Transfer, Offset: off})
			cancel()
			if err == nil || r.Path != "" || strings.Contains(err.Error(), "livetab-transfer") {
				t.Errorf("%s, another client asked for the file: %+v, %v", when, r, err)
			}
		}
	}
	stranger("before the post")

	// The owner's question waits for the page's bytes.
	type answer struct {
		r   livetabcdp.TransferFileResult
		err error
	}
	got := make(chan answer, 1)
	go func() {
		r, err := chromedp.Call(ctx, livetabcdp.TransferFile, livetabcdp.TransferFileParams{Transfer: up.Transfer})
		got <- answer{r, err}
	}()
	select {
	case a := <-got:
		t.Fatalf("answered before the page posted: %+v, %v", a.r, a.err)
	case <-time.After(300 * time.Millisecond):
	}
	if out := frameAsk(t, ctx, up.FrameURL, `{op: 'post', blob: new Blob([`+fmt.Sprintf("%q", secret)+`])}`, 3*time.Second); !strings.Contains(out, `"done":true`) {
		t.Fatalf("the transfer page's post: %s", out)
	}
	a := <-got
	if a.err != nil {
		t.Fatal(a.err)
	}
	path := a.r.Path
	if a.r.Total != size || a.r.Written <= 0 {
		t.Errorf("answer %+v, want a total of %d and some bytes written", a.r, size)
	}
	if filepath.Base(path) != livetabcdp.TransferFileName(up.Transfer) || strings.Contains(path, up.Transfer) {
		t.Errorf("the file %s is not named from the token (or names it)", path)
	}
	if _, err := os.Lstat(elsewhere); err == nil {
		t.Errorf("a client-chosen path %s got a file", elsewhere)
	}
	dir := filepath.Dir(path)
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("the transfers' directory %s: %v, %v, want a directory of mode 0700", dir, fi.Mode(), err)
	}
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("the transfer's file: %v, %v, want a regular file closed to others", fi.Mode(), err)
	}
	if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, secret) {
		t.Errorf("the file holds %q, %v", b, err)
	}
	stranger("after the post")

	// A hostile page (or program) that posts to crafted tokens makes no
	// file, here or anywhere.
	base := strings.TrimSuffix(strings.TrimPrefix(up.FrameURL, up.FrameURL[:strings.Index(up.FrameURL, "#")+1]), up.Transfer)
	for _, tok := range []string{"..%2F..%2F..%2Ftmp%2Fx", "../" + up.Transfer, up.Transfer + "/../x", strings.Repeat("A", 43), url43(elsewhere)} {
		if code, _ := get(t, "POST", base+tok, "null", secret); code == http.StatusNoContent {
			t.Errorf("a post to %s was taken", tok)
		}
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) != 1 || names[0] != filepath.Base(path) {
		t.Errorf("the transfers' directory holds %v, want only the transfer's file", names)
	}
	if _, err := os.Lstat(elsewhere); err == nil {
		t.Errorf("a post made %s", elsewhere)
	}

	// A transfer to the page has no file to give.
	down, _ := openTransfer(t, ctx, livetabcdp.TransferToPage, 10)
	if r, err := chromedp.Call(ctx, livetabcdp.TransferFile, livetabcdp.TransferFileParams{Transfer: down.Transfer}); err == nil {
		t.Errorf("a transfer to the page gave a file: %+v", r)
	}

	// Closed, the file goes; a reader that opened it keeps its bytes.
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := chromedp.Call(other, livetabcdp.CloseTransfer, livetabcdp.CloseTransferParams{Transfer: up.Transfer}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); err != nil {
		t.Errorf("another client's close removed the file: %v", err)
	}
	if _, err := chromedp.Call(ctx, livetabcdp.CloseTransfer, livetabcdp.CloseTransferParams{Transfer: up.Transfer}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); err == nil {
		t.Error("the file stays after its transfer closed")
	}
	buf := make([]byte, size)
	if n, err := f.ReadAt(buf, 0); int64(n) != size || !bytes.Equal(buf, secret) {
		t.Errorf("the open file lost its bytes at the close: %d, %v", n, err)
	}

	// A transfer whose client leaves mid-post leaves no file.
	half, _ := openTransfer(t, ctx, livetabcdp.TransferFromPage, 1<<20)
	halfPath := filepath.Join(dir, livetabcdp.TransferFileName(half.Transfer))
	if _, err := os.Lstat(halfPath); err != nil {
		t.Fatalf("no file for an open transfer at %s: %v", halfPath, err)
	}
	chromedp.Cancel(ctx)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Lstat(halfPath); err != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := os.Lstat(halfPath); err == nil {
		t.Error("a transfer's file stays after its client left")
	}
}

// url43 makes a token-shaped string from s, as a page guessing at paths
// might.
func url43(s string) string {
	s = strings.NewReplacer("/", "_", ".", "-").Replace(s)
	for len(s) < 43 {
		s += "A"
	}
	return s[len(s)-43:]
}
