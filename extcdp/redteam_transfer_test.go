package extcdp_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/extension"
	"github.com/livetab/livetab/livetabcdp"
)

// openTransfer opens a transfer on ctx's tab and returns it with the
// relay's loopback URL of it.
func openTransfer(t *testing.T, ctx context.Context, dir string, size int64) (livetabcdp.OpenTransferResult, string) {
	t.Helper()
	res, err := chromedp.Call(ctx, livetabcdp.OpenTransfer, livetabcdp.OpenTransferParams{Direction: dir, Size: size})
	if err != nil {
		t.Fatal(err)
	}
	prefix := "chrome-extension://" + extension.ID + "/transfer.html#"
	loop, ok := strings.CutPrefix(res.FrameURL, prefix)
	if !ok {
		t.Fatalf("frame URL %q is not the extension's transfer page", res.FrameURL)
	}
	u, err := url.Parse(loop)
	if err != nil || u.Scheme != "http" || u.Hostname() != "127.0.0.1" {
		t.Fatalf("the transfer is served at %q, not on 127.0.0.1", loop)
	}
	return res, loop
}

// get requests a transfer URL as a page or program would, with origin as
// the Origin header ("" for none).
func get(t *testing.T, method, u, origin string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// frameAsk frames url into ctx's page as a hostile page (or livetab's
// in-page script) would, sends the frame msg once it says it is ready, and
// returns every message the frame sent within wait, as JSON.
func frameAsk(t *testing.T, ctx context.Context, frameURL, msg string, wait time.Duration) string {
	t.Helper()
	out, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`new Promise((resolve) => {
		const f = document.createElement('iframe');
		const got = [];
		addEventListener('message', (e) => {
			if (e.source !== f.contentWindow) return;
			const d = e.data || {};
			got.push(d.blob instanceof Blob ? {blobSize: d.blob.size} : d);
			if (d.ready) f.contentWindow.postMessage(%s, '*');
			if (d.blob instanceof Blob) d.blob.text().then((s) => { got.push({text: s}); });
		});
		setTimeout(() => { f.remove(); resolve(JSON.stringify(got)); }, %d);
		f.src = %q;
		document.body.append(f);
	})`, msg, wait.Milliseconds(), frameURL), chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The transfer channel against hostile pages and other programs: the
// loopback server answers only the transfer page of a transfer's token,
// once, before it expires; a page framing the transfer page without a
// token, or pointing it elsewhere, gets nothing; one client cannot touch
// another's transfer; a cancelled transfer leaves nothing.
func TestRedTeamTransferChannel(t *testing.T) {
	ctx := newTab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(site.URL+"/form?transfer")); err != nil {
		t.Fatal(err)
	}
	secret := []byte(strings.Repeat("secret bytes ", 80))
	size := int64(len(secret))
	res, loop := openTransfer(t, ctx, livetabcdp.TransferToPage, size)
	if _, err := chromedp.Call(ctx, livetabcdp.WriteTransfer, livetabcdp.WriteTransferParams{Transfer: res.Transfer, Data: secret}); err != nil {
		t.Fatal(err)
	}
	base := loop[:strings.LastIndex(loop, "/")+1]
	port := strings.Split(strings.TrimPrefix(loop, "http://"), "/")[0]

	// Programs and pages that are not the transfer page.
	for _, origin := range []string{"", site.URL, "chrome-extension://" + extension.ID, "http://evil.example"} {
		if code, b := get(t, "GET", loop, origin, nil); code != http.StatusForbidden || bytes.Contains(b, secret[:12]) {
			t.Errorf("GET with Origin %q: %d %q, want 403 and no bytes", origin, code, b)
		}
	}
	// Guessed and crafted tokens.
	for _, u := range []string{base, base + strings.Repeat("A", 43), base + "../../../etc/passwd", "http://" + port + "/", "http://" + port + "/etc/passwd"} {
		if code, _ := get(t, "GET", u, "null", nil); code != http.StatusNotFound && code != http.StatusBadRequest {
			t.Errorf("GET %s: %d, want 404", u, code)
		}
	}
	if code, _ := get(t, "POST", loop, "null", []byte("overwrite")); code != http.StatusNotFound {
		t.Errorf("a POST to a transfer to the page: %d, want 404", code)
	}

	// Another program connected to the same relay.
	other := newTab(t)
	if err := chromedp.Do(other, chromedp.Navigate(site.URL+"/form?transfer-other")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(other, livetabcdp.WriteTransfer, livetabcdp.WriteTransferParams{Transfer: res.Transfer, Offset: size, Data: []byte("x")}); err == nil {
		t.Error("another client wrote to the transfer")
	}
	if _, err := chromedp.Call(other, livetabcdp.ReadTransfer, livetabcdp.ReadTransferParams{Transfer: res.Transfer, Size: 100}); err == nil {
		t.Error("another client read the transfer")
	}
	if _, err := chromedp.Call(other, livetabcdp.CloseTransfer, livetabcdp.CloseTransferParams{Transfer: res.Transfer}); err != nil {
		t.Errorf("closing another's transfer answers as for none: %v", err)
	}

	// Hostile pages framing the transfer page themselves.
	page := "chrome-extension://" + extension.ID + "/transfer.html"
	for _, frag := range []string{"", "#", "#" + base, "#http://localhost:" + strings.Split(port, ":")[1] + "/livetab/transfer/" + strings.Repeat("A", 43),
		"#" + url.QueryEscape("http://127.0.0.1:1/x"), "#file:///etc/passwd", "#" + site.URL + "/livetab/transfer/short"} {
		if got := frameAsk(t, other, page+frag, `{op: 'get'}`, 1500*time.Millisecond); got != "[]" {
			t.Errorf("a page framing %s got %s, want nothing", frag, got)
		}
	}
	for _, guess := range []string{base + strings.Repeat("B", 43), site.URL + "/livetab/transfer/" + strings.Repeat("A", 43)} {
		if got := frameAsk(t, other, page+"#"+guess, `{op: 'get'}`, 1500*time.Millisecond); strings.Contains(got, "blob") || !strings.Contains(got, "err") {
			t.Errorf("a page framing %s got %s, want an error", guess, got)
		}
	}

	// The transfer page of the real token serves its bytes once.
	if got := frameAsk(t, ctx, res.FrameURL, `{op: 'get'}`, 3*time.Second); !strings.Contains(got, `"blobSize":`+fmt.Sprint(size)) || !strings.Contains(got, string(secret)) {
		t.Errorf("the transfer page got %s", got)
	}
	if got := frameAsk(t, ctx, res.FrameURL, `{op: 'get'}`, 1500*time.Millisecond); strings.Contains(got, "blob") {
		t.Errorf("the token served twice: %s", got)
	}
	if code, _ := get(t, "GET", loop, "null", nil); code != http.StatusNotFound {
		t.Errorf("a spent token: %d, want 404", code)
	}

	// A token expires.
	restore := extcdp.SetTransferTTL(300 * time.Millisecond)
	late, lateLoop := openTransfer(t, ctx, livetabcdp.TransferToPage, 0)
	restore()
	time.Sleep(600 * time.Millisecond)
	if code, _ := get(t, "GET", lateLoop, "null", nil); code != http.StatusNotFound {
		t.Errorf("an expired token: %d, want 404", code)
	}
	chromedp.Call(ctx, livetabcdp.CloseTransfer, livetabcdp.CloseTransferParams{Transfer: late.Transfer})

	// From the page: only the announced size, read back by its owner only.
	up, upLoop := openTransfer(t, ctx, livetabcdp.TransferFromPage, size)
	if code, _ := get(t, "POST", upLoop, "null", append(secret, 'x')); code == http.StatusNoContent {
		t.Error("a post longer than announced was taken")
	}
	up, upLoop = openTransfer(t, ctx, livetabcdp.TransferFromPage, size)
	if got := frameAsk(t, ctx, up.FrameURL, `{op: 'post', blob: new Blob([`+fmt.Sprintf("%q", secret)+`])}`, 3*time.Second); !strings.Contains(got, `"done":true`) {
		t.Fatalf("the transfer page's post: %s", got)
	}
	if code, _ := get(t, "POST", upLoop, "null", secret); code != http.StatusNotFound {
		t.Errorf("a second post to a spent token: %d, want 404", code)
	}
	if _, err := chromedp.Call(other, livetabcdp.ReadTransfer, livetabcdp.ReadTransferParams{Transfer: up.Transfer, Size: size}); err == nil {
		t.Error("another client read the page's post")
	}
	rd, err := chromedp.Call(ctx, livetabcdp.ReadTransfer, livetabcdp.ReadTransferParams{Transfer: up.Transfer, Size: size})
	if err != nil || !bytes.Equal(rd.Data, secret) || !rd.EOF {
		t.Errorf("reading the page's post: %q eof %v, %v", rd.Data, rd.EOF, err)
	}

	// A flood of reads waiting for a post holds a bounded number of them.
	wait, _ := openTransfer(t, ctx, livetabcdp.TransferFromPage, 8<<20)
	refused := make(chan bool, 10)
	for range 10 {
		go func() {
			rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			_, err := chromedp.Call(rctx, livetabcdp.ReadTransfer, livetabcdp.ReadTransferParams{Transfer: wait.Transfer, Size: 8 << 20})
			refused <- err != nil && strings.Contains(err.Error(), "in flight")
		}()
	}
	n := 0
	for range 10 {
		if <-refused {
			n++
		}
	}
	if n != 6 {
		t.Errorf("%d of 10 waiting reads were refused, want 6", n)
	}
	chromedp.Call(ctx, livetabcdp.CloseTransfer, livetabcdp.CloseTransferParams{Transfer: wait.Transfer})

	// A client's transfers end with it.
	if n := env.Relay.Transfers(); n == 0 {
		t.Fatal("no transfer open before the client leaves")
	}
	chromedp.Cancel(ctx)
	deadline := time.Now().Add(10 * time.Second)
	for env.Relay.Transfers() != 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := env.Relay.Transfers(); n != 0 {
		t.Errorf("%d transfers stay after their client left", n)
	}
}

// TestRedTeamTransferFillsNoDisk: a program with the endpoint's token
// opens transfers of more bytes than the disk holds and writes them: the
// relay keeps them in temporary files, so it would fill the person's disk.
// A transfer that would leave the disk nearly full is refused when it
// opens, saying why.
func TestRedTeamTransferFillsNoDisk(t *testing.T) {
	ctx := newTab(t)
	for _, size := range []int64{1 << 62, 1 << 50} {
		_, err := chromedp.Call(ctx, livetabcdp.OpenTransfer, livetabcdp.OpenTransferParams{Direction: livetabcdp.TransferToPage, Size: size})
		if err == nil || !strings.Contains(err.Error(), "disk") {
			t.Errorf("a transfer of %d bytes: %v, want a refusal that names the disk", size, err)
		}
	}
}
