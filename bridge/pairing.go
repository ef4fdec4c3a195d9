package bridge

import (
	"context"
	"errors"
	"net"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/coder/websocket"

	"github.com/livetab/livetab/internal/wire"
)

// pair runs the bridge's half of the pairing by mutual proof
// (internal/wire/pairing.go): it reads the hello, proves it holds the token
// and checks the extension's proof. The token never crosses the socket, so
// an extension that dials a squatter instead of us gives nothing away, and
// a program that dials us without the token learns only a proof bound to
// its nonce, ours and our port, which it cannot reuse. pair closes ws
// itself when it refuses; the returned hello has no nonce.
func (b *Bridge) pair(ctx context.Context, c *extConn) (*wire.HelloParams, error) {
	var f wire.Frame
	var hello wire.HelloParams
	if err := b.readHandshake(ctx, c, wire.Hello, &f, &hello); err != nil {
		return nil, err
	}
	if c.shake != nil {
		b.helloCame(c.shake)
	}
	// A close reason holds at most 123 bytes: keep each one short.
	if hello.Token != "" || hello.Nonce == "" {
		// An extension from before the pairing by proof: it sent its token
		// in the clear (or nothing to prove with).
		b.log.Warn("refused an extension connection: an old extension that sends its token", "extension", hello.ExtensionID, "version", hello.Version)
		c.ws.Close(wire.CloseBadHello, "livetab: this extension is too old (it sends its token); update the extension: livetab extension DIR, then reload it")
		return nil, errors.New("old hello")
	}
	if !wire.ValidNonce(hello.Nonce) {
		b.log.Warn("refused an extension connection: a malformed nonce", "extension", hello.ExtensionID)
		c.ws.Close(wire.CloseBadHello, "livetab: the hello's nonce must be 64 lowercase hex digits")
		return nil, errors.New("bad nonce")
	}
	nb := wire.NewNonce()
	// Our own port, not the Host header: a squatter that asks us for a
	// proof on behalf of the extension it caught on another port gets one
	// the extension refuses.
	port := b.ln.Addr().(*net.TCPAddr).Port
	params, _ := jsonv2.Marshal(wire.ChallengeParams{Nonce: nb, Proof: wire.BridgeProof(b.token, port, hello.Nonce, nb)}, wire.Options)
	challenge, _ := wire.Encode(&wire.Frame{Method: wire.Challenge, Params: params})
	if err := c.write(challenge); err != nil {
		return nil, err
	}
	var p wire.ProofParams
	if err := b.readHandshake(ctx, c, wire.Proof, &f, &p); err != nil {
		return nil, err
	}
	if !wire.ProofEqual(p.Proof, wire.ExtensionProof(b.token, port, hello.Nonce, nb)) {
		b.log.Warn("refused an extension connection: wrong pairing token", "extension", hello.ExtensionID)
		c.ws.Close(wire.CloseBadToken, "livetab: wrong pairing token; open the livetab popup and paste the token printed by `livetab pair`")
		return nil, errors.New("bad proof")
	}
	hello.Nonce = ""
	return &hello, nil
}

// readHandshake reads the next frame, which must be a text frame of method
// with params that decode into v.
func (b *Bridge) readHandshake(ctx context.Context, c *extConn, method string, f *wire.Frame, v any) error {
	typ, data, err := c.ws.Read(ctx)
	if err != nil {
		b.log.Debug("extension sent no "+method, "err", err) // a flood of other programs logs nothing here
		c.ws.Close(wire.CloseBadHello, "livetab: expected "+method)
		return err
	}
	if typ != websocket.MessageText || wire.Decode(data, f) != nil || f.Method != method || f.ID != 0 ||
		jsonv2.Unmarshal(f.Params, v, wire.Options) != nil {
		b.log.Warn("refused an extension connection: expected " + method)
		c.ws.Close(wire.CloseBadHello, "livetab: expected "+method+" (update livetab or the extension so that both pair the same way)")
		return errors.New("bad " + method)
	}
	return nil
}
