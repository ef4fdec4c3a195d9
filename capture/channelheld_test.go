package capture_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/capture"
	"github.com/livetab/livetab/internal/testsite"
	"github.com/livetab/livetab/livetabcdp"
)

// The transfer channel is livetab's own, not the page's: a client whose
// policy keeps its tabs off private addresses (an agent's) still captures
// through it when its site is on another address than the relay's
// 127.0.0.1, which the client did not name.
func TestChannelUnderAPolicyOffPrivateAddresses(t *testing.T) {
	const size = 3 << 20
	body := make([]byte, size)
	for i := range body {
		body[i] = byte(i * 7)
	}
	sum := sha256.Sum256(body)
	l, err := net.Listen("tcp", "127.0.0.3:0")
	if err != nil {
		t.Fatal(err)
	}
	site := &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><title>clip</title><a id="clip">clip</a><script>
const bytes = new Uint8Array(%d); for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7) & 255;
document.getElementById('clip').href = URL.createObjectURL(new Blob([bytes], {type: 'application/octet-stream'}));
</script>`, size)
	})}}
	site.Start()
	t.Cleanup(site.Close)

	ctx := liveTab(t)
	c, err := capture.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := chromedp.Do(ctx, chromedp.Navigate(site.URL)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.CallBrowser(ctx, livetabcdp.SetPolicy, livetabcdp.SetPolicyParams{
		Domains: []string{"127.0.0.3"}, BlockPrivate: true, PrivateAllowed: []string{"127.0.0.3"},
	}); err != nil {
		t.Fatal(err)
	}
	// The rules are in force: the page's own request to another private
	// address does not leave.
	private := testsite.NewCounter(t, "127.0.0.2", "")
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch(`+strconv.Quote(private.URL+"/x")+`, {mode: 'no-cors'}).then(() => 'sent', (e) => 'refused')`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if n := private.Hits.Load(); n != 0 || v != "refused" {
		t.Fatalf("the page's request to %s: %s, %d reached it; the rules are not in force", private.URL, v, n)
	}
	res, err := c.Element(opCtx(t), capture.CSS("#clip"), capture.To(capture.Dir(t.TempDir())), capture.SaveAbove(1), capture.Rungs(capture.RungChannel, capture.RungPage))
	if err != nil {
		t.Fatal(err)
	}
	if res.Size != size || res.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("got %d bytes sha256 %s, want %d bytes sha256 %x", res.Size, res.SHA256, size, sum)
	}
	if res.Rung != capture.RungChannel {
		t.Errorf("captured by %s, want the channel (attempts %v)", res.Rung, res.Attempts)
	}
}
