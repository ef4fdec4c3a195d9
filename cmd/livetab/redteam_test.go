package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/livetab/livetab/internal/fakeext"
	"github.com/livetab/livetab/internal/wire"
)

// Red team (trust): every CDP client of a serve holds the endpoint file's
// token. If that token paired too, any client could dial the bridge on the
// same port while the extension is away (its worker restarting, Chrome
// restarting) and become "the extension": every other client's commands
// (what they type, the pages they read) would come to it, and it would
// answer them. The clients are kept apart from each other; the endpoint
// token must not make one of them the extension.
func TestRedTeamEndpointTokenDoesNotPair(t *testing.T) {
	h := newHome(t)
	s := startServe(t, h, "--addr", "127.0.0.1:0")
	if s.ep.Token() == "" {
		t.Fatal("the endpoint file has no token")
	}
	if s.ep.Token() == h.token() {
		t.Error("the endpoint file's token is the pairing token")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, _, err := fakeext.Dial(ctx, s.ep.BridgeURL(), fakeext.Options{Token: s.ep.Token()})
	if err != nil {
		t.Fatalf("dialing the bridge: %v", err)
	}
	defer e.WS.CloseNow()
	if e.BridgeProved {
		t.Error("the bridge proved to a CDP client that it holds the client's token: the endpoint token pairs")
	}
	_, data, err := e.WS.Read(ctx)
	if err == nil {
		t.Fatalf("a CDP client with the endpoint file's token paired as the extension: the bridge sent %s", data)
	}
	if code := websocket.CloseStatus(err); code != wire.CloseBadToken {
		t.Errorf("the bridge closed with %d (%v), want %d", code, err, wire.CloseBadToken)
	}
	for i := 0; i < 40 && !strings.Contains(s.log(), "wrong pairing token"); i++ {
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(s.log(), "wrong pairing token") {
		t.Errorf("the serve did not log the refusal:\n%s", s.log())
	}
}
