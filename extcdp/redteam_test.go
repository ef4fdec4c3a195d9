package extcdp_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/internal/fakeext"
)

// Attacks of the red team on the shared endpoint (issue "trust"), against a
// fake extension: what is at stake here is the relay, not the browser.

const redToken = "red-token"

// fakeEndpoint serves a relay over a fake extension as `livetab serve`
// does, and returns the browser WebSocket URL with the token in it.
func fakeEndpoint(t *testing.T, opts extcdp.HandlerOptions, setup func(*fakeext.Ext)) (string, *extcdp.Relay, *httptest.Server) {
	t.Helper()
	r := extcdp.RelayFor(fakeBridgeWith(t, setup))
	opts.Token = redToken
	srv := httptest.NewServer(r.Handler(opts))
	t.Cleanup(srv.Close)
	return r.BrowserURL(strings.TrimPrefix(srv.URL, "http://"), redToken), r, srv
}

// dialRawURL connects a raw client to any endpoint URL.
func dialRawURL(t *testing.T, u string) *rawClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(64 << 20)
	c := &rawClient{t: t, ws: ws, waiting: map[int64]chan rawMsg{}, closed: make(chan struct{})}
	go c.read()
	t.Cleanup(func() { ws.CloseNow() })
	return c
}

// A program that starts a large message and never finishes it must not
// hold up every other client's large messages (Playwright's setInputFiles
// sends files inline): messages over 1 MiB are read one at a time, so the
// one that holds the turn has to finish within a bound.
func TestRedTeamStalledLargeMessageHoldsUpNoOne(t *testing.T) {
	defer extcdp.SetBigReadTimeout(3 * time.Second)()
	u, _, _ := fakeEndpoint(t, extcdp.HandlerOptions{}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// The squatter on the turn: 2 MiB of a message, then nothing.
	slow, _, err := websocket.Dial(ctx, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.CloseNow()
	w, err := slow.Writer(ctx, websocket.MessageText)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte(`{"id":1,"method":"Browser.getVersion","params":{"pad":"` + strings.Repeat("x", 2<<20))); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the endpoint holds the turn now

	// An honest client with a 2 MiB command.
	b := dialRawURL(t, u)
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		_, err := b.call("", "Browser.getVersion", map[string]any{"pad": strings.Repeat("y", 2<<20)})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the honest client's large command failed: %v", err)
		}
		t.Logf("the honest client's 2 MiB command was answered after %v", time.Since(start).Round(time.Millisecond))
		// The staller was cut.
		if _, _, err := slow.Read(ctx); err == nil {
			t.Error("the client that stalled in a large message is still connected")
		}
	case <-time.After(90 * time.Second):
		t.Fatal("a client that stalls in the middle of a large message holds up every other client's large messages (no answer in 90 s)")
	}
}

// fmtID keeps fmt imported for the attacks below.
var _ = fmt.Sprintf
