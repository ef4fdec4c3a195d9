package bridge_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/coder/websocket"

	"github.com/livetab/livetab/bridge"
	"github.com/livetab/livetab/internal/fakeext"
	"github.com/livetab/livetab/internal/wire"
)

// syncBuffer collects log output from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func listen(t *testing.T) (*bridge.Bridge, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	b, err := bridge.Listen(ctx, bridge.Options{
		Addr:          "127.0.0.1:0",
		Token:         "s3cret-token-for-tests",
		Logger:        slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		ReconnectWait: 2 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b.Close()
		if strings.Contains(logs.String(), "s3cret-token-for-tests") {
			t.Errorf("the token appeared in the logs:\n%s", logs)
		}
	})
	return b, logs
}

func connect(t *testing.T, b *bridge.Bridge) *fakeext.Ext {
	t.Helper()
	ctx := context.Background()
	e, _, err := fakeext.Dial(ctx, b.URL(), fakeext.Options{Token: b.Token()})
	if err != nil {
		t.Fatal(err)
	}
	go e.Serve(ctx)
	t.Cleanup(func() { e.WS.CloseNow() })
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := b.WaitConnected(wctx); err != nil {
		t.Fatal(err)
	}
	return e
}

func closeStatus(t *testing.T, ws *websocket.Conn) (websocket.StatusCode, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		_, _, err := ws.Read(ctx)
		if err != nil {
			var ce websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Code, ce.Reason
			}
			t.Fatalf("want a close frame, got %v", err)
		}
	}
}

func TestCallAndEvents(t *testing.T) {
	b, _ := listen(t)
	got := make(chan *wire.Frame, 10)
	b.Subscribe(func(f *wire.Frame) { got <- f })
	e := connect(t, b)
	if f := <-got; f.Method != wire.Hello || bytes.Contains(f.Params, []byte("s3cret")) {
		t.Fatalf("first event %s %s: want a hello without the token", f.Method, f.Params)
	}
	res, err := b.Call(context.Background(), "Runtime.evaluate", 1, map[string]string{"expression": "1+1"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(res, []byte(`"value":2`)) {
		t.Fatalf("result %s", res)
	}
	for i := range 3 {
		ev, _ := wire.Encode(&wire.Frame{Method: "Page.frameNavigated", TabID: 1, Params: jsonv2.Value(`{"n":` + string(rune('0'+i)) + `}`)})
		e.Send(context.Background(), websocket.MessageText, ev)
	}
	for i := range 3 {
		f := <-got
		if f.Method != "Page.frameNavigated" || !bytes.Contains(f.Params, []byte{byte('0' + i)}) {
			t.Fatalf("event %d out of order: %s %s", i, f.Method, f.Params)
		}
	}
}

func TestErrorReplyIsWrapped(t *testing.T) {
	b, _ := listen(t)
	e := connect(t, b)
	e.Handle("Foo.bar", func(*wire.Frame) (jsonv2.Value, *cdproto.Error) {
		return nil, &cdproto.Error{Code: -32601, Message: "'Foo.bar' wasn't found"}
	})
	_, err := b.Call(context.Background(), "Foo.bar", 3, nil)
	var ce *cdproto.Error
	if !errors.As(err, &ce) || ce.Code != -32601 || !strings.Contains(err.Error(), "tab 3") {
		t.Fatalf("got %v", err)
	}
}

func TestWrongToken(t *testing.T) {
	b, logs := listen(t)
	e, _, err := fakeext.Dial(context.Background(), b.URL(), fakeext.Options{Token: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	code, reason := closeStatus(t, e.WS)
	if code != wire.CloseBadToken || !strings.Contains(reason, "popup") {
		t.Fatalf("close %d %q", code, reason)
	}
	if b.Connected() || !strings.Contains(logs.String(), "wrong pairing token") {
		t.Fatalf("connected=%v logs=%s", b.Connected(), logs)
	}
}

func TestForeignOriginAndHost(t *testing.T) {
	b, _ := listen(t)
	_, resp, err := fakeext.Dial(context.Background(), b.URL(), fakeext.Options{Token: b.Token(), Origin: "https://evil.example"})
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign origin: err=%v resp=%v", err, resp)
	}
	req, _ := http.NewRequest("GET", strings.Replace(b.URL(), "ws://", "http://", 1), nil)
	req.Host = "rebind.example:80"
	req.Header.Set("Origin", fakeext.Origin)
	r2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if r2.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign Host: status %d", r2.StatusCode)
	}
}

func TestSecondExtensionRefused(t *testing.T) {
	b, _ := listen(t)
	connect(t, b)
	e2, _, err := fakeext.Dial(context.Background(), b.URL(), fakeext.Options{Token: b.Token()})
	if err != nil {
		t.Fatal(err)
	}
	if code, reason := closeStatus(t, e2.WS); code != wire.CloseAlreadyPaired || reason == "" {
		t.Fatalf("close %d %q", code, reason)
	}
	if _, err := b.Call(context.Background(), "Runtime.evaluate", 1, nil); err != nil {
		t.Fatalf("the first extension stopped working: %v", err)
	}
}

func TestMalformedFrameKeepsConnection(t *testing.T) {
	b, logs := listen(t)
	e := connect(t, b)
	e.Send(context.Background(), websocket.MessageText, []byte("this is not json"))
	if _, err := b.Call(context.Background(), "Runtime.evaluate", 1, nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		var found bool
		for _, f := range e.Frames() {
			found = found || f.Method == "ext.error"
		}
		if found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the extension was not told about its malformed frame")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "malformed frame") {
		t.Fatalf("logs: %s", logs)
	}
}

func TestChunkedFrame(t *testing.T) {
	b, _ := listen(t)
	e := connect(t, b)
	got := make(chan *wire.Frame, 1)
	b.Subscribe(func(f *wire.Frame) {
		if f.Method == "Big.event" {
			got <- f
		}
	})
	// Send a frame three times the chunk size in chunks, as the extension
	// does for large results.
	big := strings.Repeat("x", 3*wire.ChunkSize+123)
	data, _ := wire.Encode(&wire.Frame{Method: "Big.event", Params: jsonv2.Value(`{"s":"` + big + `"}`)})
	const stream = 7
	for i := 0; i < len(data); i += wire.ChunkSize {
		end := min(i+wire.ChunkSize, len(data))
		flags := byte(0)
		if end == len(data) {
			flags = wire.ChunkLast
		}
		msg := append([]byte{flags, 0, 0, 0, stream}, data[i:end]...)
		if err := e.Send(context.Background(), websocket.MessageBinary, msg); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case f := <-got:
		if len(f.Params) != len(big)+8 {
			t.Fatalf("joined params %d bytes, want %d", len(f.Params), len(big)+8)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("chunked event never arrived")
	}
}

func TestOversizedMessageFailsPendingAndRecovers(t *testing.T) {
	b, logs := listen(t)
	e := connect(t, b)
	block := make(chan struct{})
	e.Handle("Slow.call", func(*wire.Frame) (jsonv2.Value, *cdproto.Error) { <-block; return nil, nil })
	errc := make(chan error, 1)
	go func() {
		_, err := b.Call(context.Background(), "Slow.call", 0, nil)
		errc <- err
	}()
	time.Sleep(50 * time.Millisecond)
	// A text message over the read limit (the extension must chunk).
	e.WS.Write(context.Background(), websocket.MessageText, bytes.Repeat([]byte("a"), 2*wire.ChunkSize))
	select {
	case err := <-errc:
		if !errors.Is(err, bridge.ErrExtensionGone) {
			t.Fatalf("pending call: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the pending call was not failed when the socket closed")
	}
	close(block)
	if !strings.Contains(logs.String(), "read limit") {
		t.Errorf("logs do not explain the close: %s", logs)
	}
	connect(t, b) // the extension re-dials
	if _, err := b.Call(context.Background(), "Runtime.evaluate", 1, nil); err != nil {
		t.Fatalf("after reconnect: %v", err)
	}
}

func TestNotConnectedSaysWhatToDo(t *testing.T) {
	b, _ := listen(t)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := b.WaitConnected(ctx)
	if !errors.Is(err, bridge.ErrNotConnected) || !strings.Contains(err.Error(), "Load unpacked") {
		t.Fatalf("got %v", err)
	}
}

func TestCallContextDeadline(t *testing.T) {
	b, _ := listen(t)
	e := connect(t, b)
	block := make(chan struct{})
	defer close(block)
	e.Handle("Slow.call", func(*wire.Frame) (jsonv2.Value, *cdproto.Error) { <-block; return nil, nil })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := b.Call(ctx, "Slow.call", 0, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v", err)
	}
}

func TestListenRefusesNonLoopback(t *testing.T) {
	_, err := bridge.Listen(context.Background(), bridge.Options{Addr: "0.0.0.0:0", Token: "x"})
	if err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("got %v", err)
	}
}

func TestTokenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cfg", "token")
	tok, err := bridge.LoadOrCreateToken(path)
	if err != nil || len(tok) < 32 {
		t.Fatalf("%q %v", tok, err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v %v", fi.Mode(), err)
	}
	again, err := bridge.LoadOrCreateToken(path)
	if err != nil || again != tok {
		t.Fatalf("second load %q %v", again, err)
	}
	os.Chmod(path, 0o644)
	bridge.LoadOrCreateToken(path)
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("a readable token file was not tightened: %v", fi.Mode())
	}
}

// deadBrowser is a launched browser that has exited.
type deadBrowser struct{ done chan struct{} }

func (d deadBrowser) Done() <-chan struct{} { return d.done }
func (d deadBrowser) Err() error            { return errors.New("Chromium exited: boom") }

func TestWatchedBrowserExitFailsWaitersAtOnce(t *testing.T) {
	b, _ := listen(t) // ReconnectWait 2 s
	d := deadBrowser{make(chan struct{})}
	b.Watch(d)
	errs := make(chan error, 2)
	go func() { errs <- b.WaitConnected(context.Background()) }()
	go func() { _, err := b.Call(context.Background(), "X.y", 0, nil); errs <- err }()
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	close(d.done)
	for range 2 {
		err := <-errs
		if err == nil || !strings.Contains(err.Error(), "boom") || strings.Contains(err.Error(), "Load unpacked") {
			t.Errorf("got %v, want the browser's reason", err)
		}
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("waiters took %v to learn of the exit", d)
	}
}
