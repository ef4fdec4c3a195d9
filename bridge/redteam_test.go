package bridge_test

import (
	"context"
	"net"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/coder/websocket"

	"github.com/livetab/livetab/internal/fakeext"
	"github.com/livetab/livetab/internal/wire"
)

// Red team (trust) on the pairing, from a program without the token: it
// reflects the bridge's own proof, or a proof the bridge made on another
// connection for a nonce of its choosing (the bridge's nonce reflected as
// its hello nonce), and replays a recorded extension proof with the same
// hello nonce. None pairs.
func TestRedTeamPairingReflectionAndReplay(t *testing.T) {
	b, _ := listen(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	port := b.Addr().(*net.TCPAddr).Port
	dial := func() *websocket.Conn {
		ws, _, err := websocket.Dial(ctx, b.URL(), &websocket.DialOptions{HTTPHeader: map[string][]string{"Origin": {fakeext.Origin}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ws.CloseNow() })
		return ws
	}
	hello := func(ws *websocket.Conn, ne string) wire.ChallengeParams {
		ws.Write(ctx, websocket.MessageText, []byte(`{"method":"ext.hello","params":{"nonce":"`+ne+`","version":"x","userAgent":"","extensionId":"","attached":[],"fileAccess":false}}`))
		_, data, err := ws.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var f wire.Frame
		var ch wire.ChallengeParams
		if wire.Decode(data, &f) != nil || f.Method != wire.Challenge || jsonv2.Unmarshal(f.Params, &ch) != nil {
			t.Fatalf("challenge %s", data)
		}
		return ch
	}
	prove := func(ws *websocket.Conn, proof string) {
		ws.Write(ctx, websocket.MessageText, []byte(`{"method":"ext.proof","params":{"proof":"`+proof+`"}}`))
	}
	refused := func(name string, ws *websocket.Conn) {
		t.Helper()
		code, _ := closeStatus(t, ws)
		if code != wire.CloseBadToken || b.Connected() {
			t.Fatalf("%s: close %d, connected %v", name, code, b.Connected())
		}
	}

	// 1. The bridge's own proof sent back as the extension's.
	ws := dial()
	ch := hello(ws, wire.NewNonce())
	prove(ws, ch.Proof)
	refused("reflected proof", ws)

	// 2. The bridge's nonce reflected as another connection's hello
	// nonce, and that connection's proof sent back on the first.
	ws1, ws2 := dial(), dial()
	ne := wire.NewNonce()
	ch1 := hello(ws1, ne)
	ch2 := hello(ws2, ch1.Nonce)
	prove(ws1, ch2.Proof)
	refused("cross-connection reflection", ws1)
	ws2.CloseNow()

	// 3. The extension's nonce sent back as the bridge's: a hello whose
	// nonce the attacker saw as a bridge nonce.
	ws = dial()
	ch = hello(ws, ne)
	if ch.Nonce == ne {
		t.Fatal("the bridge echoed the hello's nonce as its own")
	}
	prove(ws, ch1.Proof)
	refused("echoed nonce", ws)

	// 4. Replay: a real extension's proof of an earlier connection, with
	// the same hello nonce, on a new one.
	ws = dial()
	ne = wire.NewNonce()
	ch = hello(ws, ne)
	recorded := wire.ExtensionProof(b.Token(), port, ne, ch.Nonce)
	ws.CloseNow()
	ws = dial()
	ch2 = hello(ws, ne)
	if ch2.Nonce == ch.Nonce {
		t.Fatal("the bridge's nonce repeats")
	}
	prove(ws, recorded)
	refused("replayed proof", ws)
}
