package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	_ "image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
	"github.com/coder/websocket"

	"github.com/livetab/livetab"
	"github.com/livetab/livetab/extcdp"
)

// endpointURL is what `livetab endpoint` prints for the shared serve.
func endpointURL(t *testing.T) string {
	t.Helper()
	s := needShared(t)
	out, errOut, code := s.home.run(t, "endpoint")
	if code != 0 {
		t.Fatalf("livetab endpoint: exit %d: %s", code, errOut)
	}
	u := strings.TrimSpace(out)
	if u != s.ep.URL || !strings.Contains(u, "/devtools/browser/") || !strings.Contains(u, "token=") {
		t.Fatalf("livetab endpoint printed %q, want the endpoint file's URL %q", u, s.ep.URL)
	}
	return u
}

// tab opens a tab through chromedp's own remote allocator on url, as any Go
// program in another process would.
func tab(t *testing.T, url string) context.Context {
	t.Helper()
	actx, cancel := remote.NewAllocator(context.Background(), url)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancel = context.WithTimeout(ctx, 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func click(ctx context.Context, want string) error {
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#btn"))); err != nil {
		return err
	}
	got, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#out")))
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("the page says %q, want %q", got, want)
	}
	return nil
}

func TestRemoteChromedp(t *testing.T) {
	ctx := tab(t, endpointURL(t))
	if err := chromedp.Do(ctx, chromedp.Navigate(site.URL+"/?remote")); err != nil {
		t.Fatal(err)
	}
	if err := click(ctx, "clicked 1"); err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(ctx, chromedp.Title())
	if err != nil || title != "form" {
		t.Fatalf("title %q, %v", title, err)
	}
	for name, shot := range map[string]chromedp.Action[[]byte]{
		"viewport": chromedp.CaptureScreenshot(),
		"element":  chromedp.Screenshot(chromedp.CSS("#btn")),
	} {
		png, err := chromedp.Run(ctx, shot)
		if err != nil {
			t.Fatalf("%s screenshot: %v", name, err)
		}
		cfg, _, err := image.DecodeConfig(bytes.NewReader(png))
		if err != nil || cfg.Width == 0 || cfg.Height == 0 {
			t.Fatalf("%s screenshot is no image: %v %+v", name, err, cfg)
		}
	}
}

// rawClient is a bare CDP WebSocket client, for a client that vanishes
// without a goodbye.
type rawClient struct {
	ws   *websocket.Conn
	next int64
}

func (c *rawClient) send(ctx context.Context, sid, method string, params any) (int64, error) {
	c.next++
	msg := map[string]any{"id": c.next, "method": method, "params": params}
	if sid != "" {
		msg["sessionId"] = sid
	}
	b, err := jsonv2.Marshal(msg)
	if err != nil {
		return 0, err
	}
	return c.next, c.ws.Write(ctx, websocket.MessageText, b)
}

func (c *rawClient) call(ctx context.Context, sid, method string, params, res any) error {
	id, err := c.send(ctx, sid, method, params)
	if err != nil {
		return err
	}
	for {
		_, data, err := c.ws.Read(ctx)
		if err != nil {
			return err
		}
		var reply struct {
			ID     int64        `json:"id"`
			Result jsonv2.Value `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := jsonv2.Unmarshal(data, &reply); err != nil || reply.ID != id {
			continue
		}
		if reply.Error != nil {
			return fmt.Errorf("%s: %s", method, reply.Error.Message)
		}
		return jsonv2.Unmarshal(reply.Result, res)
	}
}

// Two chromedp clients drive two tabs at once while a third client, in the
// middle of a command, drops its connection: each of the two sees exactly
// its own page, and the dropped client's tab goes with it.
func TestClientsAtOnce(t *testing.T) {
	url := endpointURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	raw := &rawClient{ws: ws}
	var created struct {
		TargetID string `json:"targetId"`
	}
	if err := raw.call(ctx, "", "Target.createTarget", map[string]any{"url": site.URL + "/?dropped"}, &created); err != nil {
		t.Fatal(err)
	}
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	if err := raw.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": created.TargetID, "flatten": true}, &attached); err != nil {
		t.Fatal(err)
	}
	// Left waiting when the connection drops.
	if _, err := raw.send(ctx, attached.SessionID, "Runtime.evaluate", map[string]any{
		"expression": "new Promise(r => setTimeout(r, 10000))", "awaitPromise": true,
	}); err != nil {
		t.Fatal(err)
	}

	const clicks = 12
	drop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for i, name := range []string{"a", "b"} {
		tctx := tab(t, url)
		wg.Go(func() {
			if err := chromedp.Do(tctx, chromedp.Navigate(site.URL+"/?"+name)); err != nil {
				errs <- fmt.Errorf("client %s: %w", name, err)
				return
			}
			for n := 1; n <= clicks; n++ {
				if i == 0 && n == clicks/2 {
					close(drop)
				}
				if err := click(tctx, fmt.Sprintf("clicked %d", n)); err != nil {
					errs <- fmt.Errorf("client %s, click %d: %w", name, n, err)
					return
				}
			}
			u, err := chromedp.Run(tctx, chromedp.Location())
			if err == nil && !strings.HasSuffix(u, "/?"+name) {
				err = fmt.Errorf("on %s", u)
			}
			if err != nil {
				errs <- fmt.Errorf("client %s: %w", name, err)
			}
		})
	}
	<-drop
	ws.CloseNow()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	// The dropped client's tab was its own: the relay closes it.
	for {
		st := status(t, shared.home)
		gone := true
		for _, tb := range st.Tabs {
			if tb.TargetID == created.TargetID {
				gone = false
			}
		}
		if gone {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the dropped client's tab is still open: %+v", st.Tabs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func status(t *testing.T, h *home) extcdp.Status {
	t.Helper()
	out, errOut, code := h.run(t, "status", "--json")
	if code != 0 {
		t.Fatalf("livetab status --json: exit %d: %s", code, errOut)
	}
	var st extcdp.Status
	if err := jsonv2.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("livetab status --json printed %q: %v", out, err)
	}
	return st
}

func TestStatus(t *testing.T) {
	ctx := tab(t, endpointURL(t))
	if err := chromedp.Do(ctx, chromedp.Navigate(site.URL+"/?status")); err != nil {
		t.Fatal(err)
	}
	st := status(t, shared.home)
	if !st.Connected || st.Extension.Version == "" || !strings.Contains(st.Extension.UserAgent, "Chrome/") {
		t.Errorf("status says the extension is not connected: %+v", st)
	}
	if st.Clients < 1 {
		t.Errorf("status counts %d clients, want at least this test's", st.Clients)
	}
	// This test's tab is a client's: the status, which takes the token
	// every client holds, shows it without its address.
	found := false
	for _, tb := range st.Tabs {
		if strings.Contains(tb.URL, "/?status") {
			t.Errorf("status shows a client's tab's URL to anyone with the token: %+v", tb)
		}
		if tb.Client && tb.Attached && tb.Created && tb.Sessions >= 1 && tb.URL == "" && tb.TargetID == "" {
			found = true
		}
	}
	if !found {
		t.Errorf("status lists no client tab, attached, created by livetab, with a session: %+v", st.Tabs)
	}
	out, _, code := shared.home.run(t, "status")
	if code != 0 || !strings.Contains(out, "extension  connected") || !strings.Contains(out, "(a client's tab)") || strings.Contains(out, "/?status") {
		t.Errorf("livetab status: exit %d:\n%s", code, out)
	}
}

func TestConnect(t *testing.T) {
	s := needShared(t)
	t.Setenv(livetab.EndpointEnv, s.home.endpointFile())
	actx, cancel, err := livetab.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	if c := livetab.FromContext(actx); c.Way != livetab.WayServe || len(c.Skipped) != 0 {
		t.Errorf("Connect chose %s, want the serve first", c)
	}
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(site.URL+"/?connect")); err != nil {
		t.Fatal(err)
	}
	if err := click(ctx, "clicked 1"); err != nil {
		t.Fatal(err)
	}
}

func TestConnectErrors(t *testing.T) {
	dir := t.TempDir()
	missing := dir + "/none.json"
	serveOnly := []livetab.Way{livetab.WayServe}
	_, _, err := livetab.Connect(context.Background(), livetab.Options{EndpointFile: missing, Ways: serveOnly})
	if !errors.Is(err, livetab.ErrNotRunning) || !strings.Contains(err.Error(), "livetab serve") {
		t.Errorf("no endpoint file: %v, want ErrNotRunning saying to run livetab serve", err)
	}

	// A serve that is gone: its port refuses.
	gone := httptest.NewServer(http.NotFoundHandler())
	addr := gone.Listener.Addr().String()
	gone.Close()
	stale := dir + "/stale.json"
	if err := livetab.WriteEndpoint(stale, livetab.Endpoint{URL: "ws://" + addr + "/devtools/browser/x?token=t", HTTP: "http://" + addr, PID: 1}); err != nil {
		t.Fatal(err)
	}
	t.Setenv(livetab.EndpointEnv, stale)
	_, _, err = livetab.Connect(context.Background(), livetab.Options{Ways: serveOnly})
	if !errors.Is(err, livetab.ErrNotRunning) {
		t.Errorf("stale endpoint file: %v, want ErrNotRunning", err)
	}
	if fi, err := os.Stat(stale); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("endpoint file mode: %v %v, want 0600", fi.Mode(), err)
	}

	if shared == nil {
		return
	}
	wrong := shared.ep
	wrong.URL = strings.Replace(wrong.URL, "token=", "token=wrong", 1)
	if err := livetab.WriteEndpoint(stale, wrong); err != nil {
		t.Fatal(err)
	}
	_, _, err = livetab.Connect(context.Background(), livetab.Options{Ways: serveOnly})
	if !errors.Is(err, livetab.ErrTokenRefused) || !strings.Contains(err.Error(), "restart `livetab serve`") {
		t.Errorf("wrong token: %v, want ErrTokenRefused", err)
	}
}

// TestSecurity asks the serve the way a web page or a stranger would.
func TestSecurity(t *testing.T) {
	s := needShared(t)
	tok := s.ep.Token()
	base := s.ep.HTTP
	for _, c := range []struct {
		name string
		path string
		hdr  map[string]string
		host string
		want int
	}{
		{"no token", "/json/version", nil, "", 401},
		{"wrong token", "/json/version?token=nope", nil, "", 401},
		{"wrong bearer", "/livetab/status", map[string]string{"Authorization": "Bearer nope"}, "", 401},
		{"no token, browser socket", "/devtools/browser/x", nil, "", 401},
		{"web page origin", "/json/version?token=" + tok, map[string]string{"Origin": "https://evil.example"}, "", 403},
		{"rebinding host", "/json/list?token=" + tok, nil, "evil.example:80", 403},
		{"token", "/json/version", map[string]string{"Authorization": "Bearer " + tok}, "", 200},
	} {
		req, _ := http.NewRequest("GET", base+c.path, nil)
		for k, v := range c.hdr {
			req.Header.Set(k, v)
		}
		if c.host != "" {
			req.Host = c.host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, resp.StatusCode, body, c.want)
		}
		if c.want != 200 && !strings.HasPrefix(string(body), "livetab: ") {
			t.Errorf("%s: the refusal says %q, want a livetab message", c.name, body)
		}
		if resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s: a CORS header", c.name)
		}
	}

	// The WebSocket handshake: a page's Origin, with the right token.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, resp, err := websocket.Dial(ctx, s.ep.URL, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"https://evil.example"}}})
	if err == nil || resp == nil || resp.StatusCode != 403 {
		t.Errorf("WebSocket from a web page: %v %v, want 403", resp, err)
	}
	noTok := s.ep.URL[:strings.Index(s.ep.URL, "?")]
	_, resp, err = websocket.Dial(ctx, noTok, nil)
	if err == nil || resp == nil || resp.StatusCode != 401 {
		t.Errorf("WebSocket without a token: %v %v, want 401", resp, err)
	}

	// The serve logged the refusals, and never the token.
	log := s.log()
	if !strings.Contains(log, "refused") {
		t.Errorf("the serve logged no refusal:\n%s", log)
	}
	if tok == "" || strings.Contains(log, tok) || strings.Contains(log, s.home.token()) {
		t.Errorf("the serve's log shows a token:\n%s", log)
	}
}

func TestServeRefusesNonLoopback(t *testing.T) {
	h := newHome(t)
	_, errOut, code := h.run(t, "serve", "--addr", "0.0.0.0:9339")
	if code == 0 || !strings.Contains(errOut, "loopback only") || !strings.Contains(errOut, "ssh -N -L 9339:127.0.0.1:9339") {
		t.Errorf("serve on 0.0.0.0: exit %d: %s", code, errOut)
	}
}

func TestExtensionAndPair(t *testing.T) {
	h := newHome(t)
	dir := h.dir + "/ext"
	out, errOut, code := h.run(t, "extension", dir)
	if code != 0 {
		t.Fatalf("livetab extension: exit %d: %s", code, errOut)
	}
	tok := h.token()
	if tok == "" {
		t.Fatal("livetab extension made no token file")
	}
	if fi, err := os.Stat(h.tokenFile()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("token file: %v %v, want mode 0600", fi, err)
	}
	for _, want := range []string{"chrome://extensions", "Developer mode", "Load unpacked", dir} {
		if !strings.Contains(out, want) {
			t.Errorf("livetab extension does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out+errOut, tok) {
		t.Error("livetab extension printed the token")
	}
	b, err := os.ReadFile(dir + "/config.json")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		URL   string `json:"url"`
		Token string `json:"token"`
	}
	if err := jsonv2.Unmarshal(b, &cfg); err != nil || cfg.Token != tok || cfg.URL != "ws://127.0.0.1:9339/extension" {
		t.Errorf("config.json: %+v %v", cfg, err)
	}
	if _, err := os.Stat(dir + "/manifest.json"); err != nil {
		t.Error(err)
	}

	out, _, code = h.run(t, "pair")
	if code != 0 || !strings.Contains(out, "Token       "+tok) || !strings.Contains(out, "ws://127.0.0.1:9339/extension") {
		t.Errorf("livetab pair: exit %d:\n%s", code, out)
	}

	_, errOut, code = h.run(t, "endpoint")
	if code == 0 || !strings.Contains(errOut, "livetab serve") {
		t.Errorf("livetab endpoint with no serve: exit %d: %s", code, errOut)
	}
	// With stdin closed the MCP server ends at once; stdout is the
	// protocol's alone, so the warning about the empty allowlist goes to
	// stderr.
	out, errOut, code = h.run(t, "mcp")
	if code != 0 || out != "" || !strings.Contains(errOut, "no domain is allowed") {
		t.Errorf("livetab mcp: exit %d: stdout %q, stderr %s", code, out, errOut)
	}
}

// With --single-client, a second CDP client is refused while one is
// connected. It needs no extension: the handshake comes first.
func TestServeSingleClient(t *testing.T) {
	h := newHome(t)
	s := startServe(t, h, "--addr", "127.0.0.1:0", "--single-client")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	first, _, err := websocket.Dial(ctx, s.ep.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer first.CloseNow()
	_, resp, err := websocket.Dial(ctx, s.ep.URL, nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusConflict {
		t.Errorf("a second client: %v %v, want 409", resp, err)
	}
	if err := s.interrupt(); err != nil {
		t.Fatal(err)
	}
}
