package extcdp_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/upload"
)

// endpoint serves the test browser's relay as a CDP endpoint.
func endpoint(t testing.TB) (*httptest.Server, string) {
	t.Helper()
	if env == nil {
		t.Skip("no test browser")
	}
	tok := "endpoint-token"
	srv := httptest.NewServer(env.Relay.Handler(extcdp.HandlerOptions{Token: tok}))
	t.Cleanup(srv.Close)
	return srv, tok
}

func TestEndpointRemoteAllocator(t *testing.T) {
	srv, tok := endpoint(t)
	// What `livetab endpoint` prints: the browser URL with the token in it.
	wsURL := env.Relay.BrowserURL(strings.TrimPrefix(srv.URL, "http://"), tok)
	actx, cancel := remote.NewAllocator(context.Background(), wsURL)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx,
		chromedp.Navigate(site.URL+"/form"),
		chromedp.Click(chromedp.CSS("#btn")),
	); err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#content")))
	if err != nil || text != "clicked" {
		t.Fatalf("%q %v", text, err)
	}
}

func TestEndpointSecurity(t *testing.T) {
	srv, tok := endpoint(t)
	get := func(path string, hdr map[string]string, host string) int {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s sent a CORS header", path)
		}
		return resp.StatusCode
	}
	for _, c := range []struct {
		name string
		path string
		hdr  map[string]string
		host string
		want int
	}{
		{"no token", "/json/version", nil, "", 401},
		{"wrong token", "/json/version?token=nope", nil, "", 401},
		{"wrong bearer", "/json/version", map[string]string{"Authorization": "Bearer nope"}, "", 401},
		{"web page origin", "/json/version?token=" + tok, map[string]string{"Origin": "https://evil.example"}, "", 403},
		{"rebinding host", "/json/version?token=" + tok, nil, "evil.example", 403},
		{"token in query", "/json/version?token=" + tok, nil, "", 200},
		{"bearer", "/json/version/", map[string]string{"Authorization": "Bearer " + tok}, "", 200},
		{"list", "/json/list?token=" + tok, nil, "", 200},
	} {
		if got := get(c.path, c.hdr, c.host); got != c.want {
			t.Errorf("%s: status %d, want %d", c.name, got, c.want)
		}
	}
	resp, err := http.Get(srv.URL + "/json/version?token=" + tok)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "webSocketDebuggerUrl") || !strings.Contains(string(b), "Chrome/") {
		t.Fatalf("/json/version: %s", b)
	}
}

// The transfer channel through the endpoint door: a remote program's
// upload streams its bytes to the relay over its CDP connection, the
// extension's transfer page fetches them from the relay, and the page
// sends the file the program meant.
func TestEndpointTransferChannel(t *testing.T) {
	srv, tok := endpoint(t)
	actx, cancel := remote.NewAllocator(context.Background(), env.Relay.BrowserURL(strings.TrimPrefix(srv.URL, "http://"), tok))
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(site.URL+"/upload")); err != nil {
		t.Fatal(err)
	}
	content := bytes.Repeat([]byte("through the endpoint's channel\n"), 100000)
	res, err := upload.Files(ctx, upload.CSS("#file"), []upload.File{upload.Bytes("remote.txt", content)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Mode != upload.Channel {
		t.Errorf("took %s (%s), want the channel", res.Mode, res.Fallback)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById('status').textContent.startsWith('sent')`)); err != nil {
		t.Fatal(err)
	}
	if got := site.Received("remote.txt"); !bytes.Equal(got, content) {
		t.Fatalf("the server received %d bytes, want %d", len(got), len(content))
	}
}
