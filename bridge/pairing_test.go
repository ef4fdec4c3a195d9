package bridge_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/coder/websocket"

	"github.com/livetab/livetab/internal/fakeext"
	"github.com/livetab/livetab/internal/wire"
)

// An extension from before the pairing by proof sends its token in the
// hello. The bridge refuses it, says to update the extension, and takes
// nothing from it, even with the right token.
func TestOldHelloRefused(t *testing.T) {
	b, logs := listen(t)
	e, _, err := fakeext.Dial(context.Background(), b.URL(), fakeext.Options{Token: b.Token(), OldHello: true})
	if err != nil {
		t.Fatal(err)
	}
	code, reason := closeStatus(t, e.WS)
	if code != wire.CloseBadHello || !strings.Contains(reason, "update the extension") {
		t.Fatalf("close %d %q", code, reason)
	}
	if b.Connected() || !strings.Contains(logs.String(), "old extension") {
		t.Fatalf("connected=%v logs=%s", b.Connected(), logs)
	}
}

// A fake extension with a made-up proof, or a proof under another token, is
// refused; the challenge it got proves the bridge without giving the token.
func TestWrongProofRefused(t *testing.T) {
	b, logs := listen(t)
	for _, o := range []fakeext.Options{
		{Token: b.Token(), Proof: wire.NewNonce()},
		{Token: b.Token(), Proof: strings.ToUpper(wire.NewNonce())},
		{Token: "another-token"},
	} {
		e, _, err := fakeext.Dial(context.Background(), b.URL(), o)
		if err != nil {
			t.Fatal(err)
		}
		if e.BridgeProved != (o.Token == b.Token()) {
			t.Errorf("token %q: BridgeProved = %v", o.Token, e.BridgeProved)
		}
		code, reason := closeStatus(t, e.WS)
		if code != wire.CloseBadToken || !strings.Contains(reason, "livetab pair") {
			t.Fatalf("close %d %q", code, reason)
		}
		if b.Connected() {
			t.Fatal("the bridge accepted a wrong proof")
		}
	}
	if !strings.Contains(logs.String(), "wrong pairing token") {
		t.Fatalf("logs=%s", logs)
	}
}

// The right proof pairs, and the bridge proved itself first; the hello the
// bridge keeps has neither token nor nonce.
func TestMutualProofPairs(t *testing.T) {
	b, _ := listen(t)
	ctx := context.Background()
	e, _, err := fakeext.Dial(ctx, b.URL(), fakeext.Options{Token: b.Token(), Attached: []int64{4}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.WS.CloseNow()
	if !e.BridgeProved {
		t.Fatal("the bridge's challenge did not prove it holds the token")
	}
	go e.Serve(ctx)
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := b.WaitConnected(wctx); err != nil {
		t.Fatal(err)
	}
	if h := b.Hello(); h.Token != "" || h.Nonce != "" || len(h.Attached) != 1 || h.Attached[0] != 4 {
		t.Fatalf("hello kept %+v", h)
	}
}

// Whatever comes instead of a proper hello or proof ends the socket: a
// malformed nonce, a request, the token in place of the proof.
func TestHandshakeRefusesOddFrames(t *testing.T) {
	b, _ := listen(t)
	ctx := context.Background()
	dial := func() *websocket.Conn {
		ws, _, err := websocket.Dial(ctx, b.URL(), &websocket.DialOptions{HTTPHeader: map[string][]string{"Origin": {fakeext.Origin}}})
		if err != nil {
			t.Fatal(err)
		}
		return ws
	}
	for name, msgs := range map[string][]string{
		"short nonce":       {`{"method":"ext.hello","params":{"nonce":"00","version":"x","userAgent":"","extensionId":"","attached":[],"fileAccess":false}}`},
		"request first":     {`{"id":1,"method":"ext.hello","params":{"nonce":"` + wire.NewNonce() + `"}}`},
		"binary hello":      {"\x01\x00\x00\x00\x00{}"},
		"request for proof": {`{"method":"ext.hello","params":{"nonce":"` + wire.NewNonce() + `","version":"x","userAgent":"","extensionId":"","attached":[],"fileAccess":false}}`, `{"id":2,"method":"ext.targets"}`},
		"token for proof":   {`{"method":"ext.hello","params":{"nonce":"` + wire.NewNonce() + `","version":"x","userAgent":"","extensionId":"","attached":[],"fileAccess":false}}`, `{"method":"ext.proof","params":{"proof":"` + b.Token() + `"}}`},
	} {
		ws := dial()
		for _, m := range msgs {
			typ := websocket.MessageText
			if m[0] == 1 {
				typ = websocket.MessageBinary
			}
			ws.Write(ctx, typ, []byte(m))
		}
		code, _ := closeStatus(t, ws)
		if code != wire.CloseBadHello && code != wire.CloseBadToken {
			t.Errorf("%s: close %d", name, code)
		}
		if b.Connected() {
			t.Fatalf("%s: paired", name)
		}
	}
}

// A squatter on another port that relays the extension's nonce to a real
// bridge with the same token gets a proof bound to the bridge's own port,
// which the extension (dialing the squatter's port) refuses.
func TestBridgeProofIsBoundToItsPort(t *testing.T) {
	b, _ := listen(t)
	ctx := context.Background()
	ws, _, err := websocket.Dial(ctx, b.URL(), &websocket.DialOptions{HTTPHeader: map[string][]string{"Origin": {fakeext.Origin}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	ne := wire.NewNonce()
	ws.Write(ctx, websocket.MessageText, []byte(`{"method":"ext.hello","params":{"nonce":"`+ne+`","version":"x","userAgent":"","extensionId":"","attached":[],"fileAccess":false}}`))
	_, data, err := ws.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var f wire.Frame
	var ch wire.ChallengeParams
	if err := wire.Decode(data, &f); err != nil || f.Method != wire.Challenge || jsonv2.Unmarshal(f.Params, &ch) != nil {
		t.Fatalf("challenge %s", data)
	}
	port := b.Addr().(*net.TCPAddr).Port
	if ch.Proof != wire.BridgeProof(b.Token(), port, ne, ch.Nonce) {
		t.Fatal("the challenge's proof is not the bridge's for its own port")
	}
	if ch.Proof == wire.BridgeProof(b.Token(), 9339, ne, ch.Nonce) && port != 9339 {
		t.Fatal("the proof would convince an extension dialing another port")
	}
}

// A program on the machine (an Origin header is only a header) opens many
// connections that never pair, each with a hello larger than any real one
// on its way. Before pairing a message is bounded, and so is the number of
// connections pairing at once (the oldest goes): the program holds little
// of the bridge, and the extension that dials next still pairs.
func TestUnpairedHandshakesAreBounded(t *testing.T) {
	b, _ := listen(t)
	ctx := context.Background()
	var squat []*websocket.Conn
	for range 1100 {
		ws, _, err := websocket.Dial(ctx, b.URL(), &websocket.DialOptions{HTTPHeader: map[string][]string{"Origin": {fakeext.Origin}}})
		if err != nil {
			t.Fatal(err)
		}
		defer ws.CloseNow()
		squat = append(squat, ws)
	}
	big := `{"method":"ext.hello","params":{"nonce":"` + wire.NewNonce() + `","version":"` + strings.Repeat("x", 80<<10) + `"}}`
	over := squat[len(squat)-1]
	over.Write(ctx, websocket.MessageText, []byte(big))
	if code, _ := closeStatusOrDrop(over); code != websocket.StatusMessageTooBig {
		t.Errorf("an 80 KiB hello before pairing: close %d, want %d (message too big)", code, websocket.StatusMessageTooBig)
	}
	var open atomic.Int64
	var wg sync.WaitGroup
	rctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	for _, ws := range squat[:len(squat)-1] {
		wg.Go(func() {
			if _, _, err := ws.Read(rctx); errors.Is(err, context.DeadlineExceeded) {
				open.Add(1) // still open when the wait ended
			}
		})
	}
	wg.Wait()
	if n := open.Load(); n > 1024 || n < 900 {
		t.Errorf("%d connections that never paired are open at once, want at most 1024 (and most of them: the handshake's 10 s had not run out)", n)
	}
	connect(t, b) // the real extension still pairs
}

// closeStatusOrDrop is the close code ws ended with, 0 when it ended
// without a close frame.
func closeStatusOrDrop(ws *websocket.Conn) (websocket.StatusCode, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		if _, _, err := ws.Read(ctx); err != nil {
			return websocket.CloseStatus(err), err
		}
	}
}
