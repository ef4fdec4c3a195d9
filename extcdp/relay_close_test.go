package extcdp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"

	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/internal/fakeext"
	"github.com/livetab/livetab/internal/wire"
)

// A bridge has one relay at a time; Close gives the bridge back.
func TestNewRelayOnePerBridge(t *testing.T) {
	br := fakeBridge(t)
	r, err := extcdp.NewRelay(br, extcdp.RelayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := extcdp.NewRelay(br, extcdp.RelayOptions{}); !errors.Is(err, extcdp.ErrRelayOpen) {
		t.Fatalf("a second relay on one bridge: got %v, want ErrRelayOpen", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	r2, err := extcdp.NewRelay(br, extcdp.RelayOptions{})
	if err != nil {
		t.Fatalf("a relay after the first closed: %v", err)
	}
	r2.Close()
}

// Close answers what its clients wait for, ends the endpoint's connections
// with a reason, refuses new ones, and leaves no goroutine behind.
func TestRelayCloseEndsItsClients(t *testing.T) {
	br := fakeBridgeWith(t, func(e *fakeext.Ext) {
		e.Handle(wire.Targets, func(*wire.Frame) (jsonv2.Value, *cdproto.Error) {
			return jsonv2.Value(`{"targets":[{"tabId":1,"targetId":"T1","windowId":1,"url":"about:blank","title":"","active":true,"attached":false}]}`), nil
		})
		e.Handle(wire.Attach, func(*wire.Frame) (jsonv2.Value, *cdproto.Error) {
			return fakeext.NoReply, nil // an attach that never completes
		})
	})
	before := runtime.NumGoroutine()
	r, err := extcdp.NewRelay(br, extcdp.RelayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(r.Handler(extcdp.HandlerOptions{Token: "tok"}))
	defer srv.Close()
	url := r.BrowserURL(strings.TrimPrefix(srv.URL, "http://"), "tok")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	// A command the relay is still working on when it closes.
	if err := ws.Write(ctx, websocket.MessageText, []byte(`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"T1","flatten":true}}`)); err != nil {
		t.Fatal(err)
	}
	c := r.NewClient()
	c.Handle(&cdproto.Message{ID: 7, Method: "Target.attachToTarget", Params: jsonv2.Value(`{"targetId":"T1","flatten":true}`)})
	time.Sleep(100 * time.Millisecond) // both attaches reach the extension

	closed := make(chan error, 1)
	go func() { closed <- r.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(8 * time.Second):
		t.Fatal("Close did not return within 8 s")
	}

	// The in-process client: its pending command is answered or the client
	// is closed, within a bound.
	for {
		m, err := c.Next(ctx)
		if errors.Is(err, extcdp.ErrClientClosed) {
			break
		}
		if err != nil {
			t.Fatalf("the in-process client after Close: %v", err)
		}
		if m.ID == 7 {
			break
		}
	}
	// The endpoint client: the connection ends, and says why.
	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			if s := websocket.CloseStatus(err); s != websocket.StatusGoingAway {
				t.Fatalf("the endpoint connection ended with %v (%v), want going away", s, err)
			}
			if !strings.Contains(err.Error(), "relay") {
				t.Errorf("close reason %q does not say the relay closed", err)
			}
			break
		}
		_ = data // the reply to id 1, if it came first
	}
	// A new connection is refused with a reason.
	resp, err := http.Get(strings.Replace(url, "ws://", "http://", 1))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a connection after Close got %d, want 503", resp.StatusCode)
	}
	// A client made after Close is closed.
	if _, err := r.NewClient().Next(ctx); !errors.Is(err, extcdp.ErrClientClosed) {
		t.Errorf("Next on a client made after Close: %v, want ErrClientClosed", err)
	}

	srv.Close()
	ws.CloseNow()
	noGoroutinesLeft(t, before, 2)
}

// noGoroutinesLeft waits up to 5 s for the goroutines to fall back to
// before (give or take slack), and fails the test with their stacks if
// they do not.
func noGoroutinesLeft(t *testing.T, before, slack int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+slack && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+slack {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines after Close, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

// The one-line path: allocators on a bridge share its relay, use the one
// the program opened, and close the one they started once the last of them
// ends.
func TestNewAllocatorSharesTheRelay(t *testing.T) {
	br := fakeBridge(t)
	a1, cancel1 := extcdp.NewAllocator(context.Background(), br)
	a2, cancel2 := extcdp.NewAllocator(context.Background(), br)
	for _, a := range []context.Context{a1, a2} {
		ctx, cancel := chromedp.NewContext(a)
		if err := chromedp.Do(ctx); err != nil {
			t.Fatal(err)
		}
		defer cancel()
	}
	if _, err := extcdp.NewRelay(br, extcdp.RelayOptions{}); !errors.Is(err, extcdp.ErrRelayOpen) {
		t.Fatalf("while allocators use the bridge: got %v, want ErrRelayOpen", err)
	}
	cancel1()
	if _, err := extcdp.NewRelay(br, extcdp.RelayOptions{}); !errors.Is(err, extcdp.ErrRelayOpen) {
		t.Fatalf("while one allocator still uses the bridge: got %v, want ErrRelayOpen", err)
	}
	cancel2()
	var r *extcdp.Relay
	deadline := time.Now().Add(5 * time.Second)
	for {
		var err error
		if r, err = extcdp.NewRelay(br, extcdp.RelayOptions{}); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the allocators' relay is still open 5 s after both ended: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	defer r.Close()

	// An allocator on a bridge whose relay the program opened uses it, and
	// leaves it open when it ends.
	a3, cancel3 := extcdp.NewAllocator(context.Background(), br)
	ctx, cancel := chromedp.NewContext(a3)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatal(err)
	}
	if n := r.Status().Clients; n != 1 {
		t.Errorf("the program's relay has %d clients, want the allocator's 1", n)
	}
	cancel()
	cancel3()
	time.Sleep(200 * time.Millisecond)
	if _, err := extcdp.NewRelay(br, extcdp.RelayOptions{}); !errors.Is(err, extcdp.ErrRelayOpen) {
		t.Fatalf("an allocator closed the program's relay: %v", err)
	}
}
