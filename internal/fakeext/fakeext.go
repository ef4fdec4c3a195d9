// Package fakeext is a stand-in for the livetab extension in unit tests
// and benchmarks of the Go side: it dials a bridge like the service worker
// does and answers from a table. It proves nothing about Chrome; the
// end-to-end tests use the real extension.
package fakeext

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/coder/websocket"

	"github.com/livetab/livetab/internal/wire"
)

// Origin is the Origin header the fake sends: the real extension's.
const Origin = "chrome-extension://eklljajjoeckbndnofgggnldegggkbdp"

// Ext is a connected fake extension.
type Ext struct {
	WS *websocket.Conn

	mu sync.Mutex
	// Handlers answer methods; a missing one answers {}.
	Handlers map[string]func(f *wire.Frame) (jsonv2.Value, *cdproto.Error)
	// Received records the frames that were not requests.
	Received []*wire.Frame
	closed   chan struct{}

	// BridgeProved tells whether the bridge proved, in its challenge, that
	// it holds the fake's token. The fake answers with its own proof either
	// way, so that tests can watch the bridge refuse a wrong one.
	BridgeProved bool
}

// Options change what the fake says in its handshake.
type Options struct {
	Origin   string // default Origin
	Token    string
	Attached []int64
	// OldHello sends the hello of extensions before the pairing by proof:
	// the token itself and no nonce. Dial returns after the hello.
	OldHello bool
	// Proof, when set, is sent instead of the right proof.
	Proof string
}

// Dial connects to a bridge URL and pairs like the extension
// (internal/wire/pairing.go): hello with a nonce, the bridge's challenge,
// the fake's proof. It returns after the proof is sent; the welcome (or the
// bridge's refusal) is read by Serve or the test. A bridge that closes
// instead of sending a challenge makes Dial fail with its close status.
func Dial(ctx context.Context, url string, o Options) (*Ext, *http.Response, error) {
	if o.Origin == "" {
		o.Origin = Origin
	}
	ws, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {o.Origin}}})
	if err != nil {
		return nil, resp, err
	}
	ws.SetReadLimit(-1)
	e := &Ext{WS: ws, Handlers: DefaultHandlers(), closed: make(chan struct{})}
	h := wire.HelloParams{Version: "fake", UserAgent: "Mozilla/5.0 HeadlessChrome/156.0.0.0", ExtensionID: "eklljajjoeckbndnofgggnldegggkbdp", Attached: o.Attached}
	if o.OldHello {
		h.Token = o.Token
	} else {
		h.Nonce = wire.NewNonce()
	}
	hello, _ := jsonv2.Marshal(h, wire.Options)
	data, _ := wire.Encode(&wire.Frame{Method: wire.Hello, Params: hello})
	if err := ws.Write(ctx, websocket.MessageText, data); err != nil {
		return nil, resp, err
	}
	if o.OldHello {
		return e, resp, nil
	}
	port, err := wire.URLPort(url)
	if err != nil {
		return nil, resp, err
	}
	_, data, err = ws.Read(ctx)
	if err != nil {
		return nil, resp, fmt.Errorf("fakeext: waiting for the challenge: %w", err)
	}
	var f wire.Frame
	var ch wire.ChallengeParams
	if err := wire.Decode(data, &f); err != nil || f.Method != wire.Challenge || jsonv2.Unmarshal(f.Params, &ch, wire.Options) != nil {
		return nil, resp, fmt.Errorf("fakeext: want %s, got %s", wire.Challenge, data)
	}
	e.BridgeProved = wire.ValidNonce(ch.Nonce) && wire.ProofEqual(ch.Proof, wire.BridgeProof(o.Token, port, h.Nonce, ch.Nonce))
	proof := o.Proof
	if proof == "" {
		proof = wire.ExtensionProof(o.Token, port, h.Nonce, ch.Nonce)
	}
	params, _ := jsonv2.Marshal(wire.ProofParams{Proof: proof}, wire.Options)
	data, _ = wire.Encode(&wire.Frame{Method: wire.Proof, Params: params})
	if err := ws.Write(ctx, websocket.MessageText, data); err != nil {
		return nil, resp, err
	}
	return e, resp, nil
}

// DefaultHandlers knows one tab (id 1, target "T1") and answers
// Runtime.evaluate with 2.
func DefaultHandlers() map[string]func(*wire.Frame) (jsonv2.Value, *cdproto.Error) {
	return map[string]func(*wire.Frame) (jsonv2.Value, *cdproto.Error){
		wire.Targets: func(*wire.Frame) (jsonv2.Value, *cdproto.Error) {
			return jsonv2.Value(`{"targets":[{"tabId":1,"targetId":"T1","windowId":1,"url":"about:blank","title":"","active":true,"attached":false}]}`), nil
		},
		wire.CreateTab: func(*wire.Frame) (jsonv2.Value, *cdproto.Error) {
			return jsonv2.Value(`{"tabId":1,"targetId":"T1","windowId":1,"url":"about:blank","title":"","active":true,"attached":false}`), nil
		},
		wire.Attach: func(*wire.Frame) (jsonv2.Value, *cdproto.Error) {
			return jsonv2.Value(`{"targetId":"T1"}`), nil
		},
		"Runtime.evaluate": func(*wire.Frame) (jsonv2.Value, *cdproto.Error) {
			return jsonv2.Value(`{"result":{"type":"number","value":2,"description":"2"}}`), nil
		},
	}
}

// NoReply, returned by a handler, leaves the request unanswered: a tab
// whose attach never completes, an extension that wedged.
var NoReply = jsonv2.Value(`"fakeext: no reply"`)

// Serve answers requests until the socket closes, and returns why it closed.
func (e *Ext) Serve(ctx context.Context) error {
	defer close(e.closed)
	for {
		_, data, err := e.WS.Read(ctx)
		if err != nil {
			return err
		}
		f := new(wire.Frame)
		if err := wire.Decode(data, f); err != nil {
			continue
		}
		if f.ID == 0 {
			e.mu.Lock()
			e.Received = append(e.Received, f)
			e.mu.Unlock()
			continue
		}
		e.mu.Lock()
		h := e.Handlers[f.Method]
		e.mu.Unlock()
		reply := &wire.Frame{ID: f.ID}
		if h != nil {
			reply.Result, reply.Error = h(f)
		}
		if string(reply.Result) == string(NoReply) {
			continue
		}
		if reply.Result == nil && reply.Error == nil {
			reply.Result = jsonv2.Value(`{}`)
		}
		out, _ := wire.Encode(reply)
		if err := e.WS.Write(ctx, websocket.MessageText, out); err != nil {
			return err
		}
	}
}

// Handle sets the handler of a method.
func (e *Ext) Handle(method string, h func(*wire.Frame) (jsonv2.Value, *cdproto.Error)) {
	e.mu.Lock()
	e.Handlers[method] = h
	e.mu.Unlock()
}

// Send writes a raw message to the bridge.
func (e *Ext) Send(ctx context.Context, typ websocket.MessageType, data []byte) error {
	return e.WS.Write(ctx, typ, data)
}

// Frames returns the non-request frames received so far.
func (e *Ext) Frames() []*wire.Frame {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]*wire.Frame(nil), e.Received...)
}

// Closed is closed when Serve returns.
func (e *Ext) Closed() <-chan struct{} { return e.closed }
