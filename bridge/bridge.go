// Package bridge is the Go end of the livetab extension's connection: a
// WebSocket server on the loopback interface that the extension's service
// worker dials. It pairs the extension with a token, correlates requests and
// replies, delivers the extension's events in order, and carries on when the
// extension reconnects (its service worker can be stopped at any time).
//
// A bridge speaks the frames of package internal/wire. Most programs do not
// use it directly: they pass it to extcdp.NewAllocator and use chromedp.
package bridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/coder/websocket"

	"github.com/livetab/livetab/extension"
	"github.com/livetab/livetab/internal/connlimit"
	"github.com/livetab/livetab/internal/wire"
)

// DefaultAddr is where a bridge listens unless [Options.Addr] says otherwise.
const DefaultAddr = "127.0.0.1:9339"

// ExtensionPath is the URL path the extension dials.
const ExtensionPath = "/extension"

// Disconnected is the method of the frame a bridge gives its subscribers
// when the extension's socket closed. Its params are {"reason": "..."}.
// When the extension connects, subscribers get a [wire.Hello] frame whose
// params carry everything of the hello but its nonce.
const Disconnected = "bridge.disconnected"

// Errors of a bridge. Test for them with errors.Is.
var (
	// ErrNotConnected: no extension is connected, and none came within the
	// wait of the call.
	ErrNotConnected = errors.New("the livetab extension is not connected: install it (livetab extension DIR, then Load unpacked in chrome://extensions) and pair it (paste the bridge URL and token into its popup)")
	// ErrExtensionGone: the extension's socket closed while a call waited
	// for its reply. The extension re-dials by itself; retry the call.
	ErrExtensionGone = errors.New("the livetab extension disconnected before it answered (its service worker may have been stopped); it reconnects by itself, so retry")
	// ErrClosed: the bridge was closed.
	ErrClosed = errors.New("bridge closed")
)

// Options configure a bridge. The zero value listens on [DefaultAddr] with
// the token stored in [DefaultTokenFile].
type Options struct {
	// Addr is the host:port to listen on. The host must be a loopback
	// address: the bridge lets whoever holds the token drive the user's
	// browser, so it never listens on a network. Use port 0 for a free port.
	Addr string

	// Token is the pairing token. When empty, it is read from TokenFile,
	// which is created with a new random token the first time.
	Token string

	// TokenFile is where the token is kept; default [DefaultTokenFile].
	TokenFile string

	// ExtensionIDs are the ids of the extensions allowed to connect; their
	// Origin is chrome-extension://<id>. Default: the pinned id of the
	// livetab extension, [extension.ID].
	ExtensionIDs []string

	// Logger receives connection events; never the token. Default: discard.
	Logger *slog.Logger

	// MaxFrameSize bounds one frame after its chunks are joined. Default
	// 512 MiB.
	MaxFrameSize int64

	// ReconnectWait is how long a call waits for the extension when none is
	// connected (its worker may be restarting). Default 10 s; a negative
	// value fails at once.
	ReconnectWait time.Duration
}

// Bridge is a listening bridge. Its methods are safe for concurrent use.
type Bridge struct {
	opts  Options
	log   *slog.Logger
	token string
	ln    net.Listener
	srv   *http.Server
	mux   *http.ServeMux

	nextID atomic.Int64
	subs   atomic.Pointer[[]subscriber]
	subMu  sync.Mutex
	subSeq int

	mu        sync.Mutex
	conn      *extConn
	ready     chan struct{} // closed while an extension is connected
	hello     wire.HelloParams
	closed    bool
	closedCh  chan struct{}
	lastClose string // why the last extension socket ended, for errors
	// gaveUp is when a wait for an extension that was away last ran out:
	// for ReconnectWait after it, calls fail at once rather than each
	// wait again (zero once one connects).
	gaveUp time.Time

	// shaking are the extension connections still pairing, oldest first
	// (serveExtension). Guarded by mu.
	shaking []*shake

	// gone is closed when the browser the extension runs in has exited
	// (see Watch); nil, so never ready, when nobody said which browser.
	gone    <-chan struct{}
	goneErr func() error
}

// Browser is a browser livetab launched, as [Bridge.Watch] needs it:
// *extension.Browser is one.
type Browser interface {
	// Done is closed when the browser process has exited.
	Done() <-chan struct{}
	// Err says why it exited; nil while it runs.
	Err() error
}

// Watch tells the bridge which browser its extension runs in. Once that
// browser has exited, waiting for the extension fails at once with the
// browser's own reason instead of advice to install the extension, which
// a launched browser does not need.
func (b *Bridge) Watch(br Browser) {
	b.mu.Lock()
	b.gone, b.goneErr = br.Done(), br.Err
	b.mu.Unlock()
}

// exited is the error for a watched browser that has exited.
func (b *Bridge) exited(why func() error) error {
	err := why()
	if err == nil {
		err = errors.New("the browser exited")
	}
	return fmt.Errorf("bridge at %s: the extension's browser is gone: %w", b.URL(), err)
}

// Listen starts a bridge. It returns when the bridge listens; the extension
// may connect later (see [Bridge.WaitConnected]). Cancelling ctx closes it.
func Listen(ctx context.Context, opts Options) (*Bridge, error) {
	if opts.Addr == "" {
		opts.Addr = DefaultAddr
	}
	if err := checkLoopback(opts.Addr); err != nil {
		return nil, err
	}
	if len(opts.ExtensionIDs) == 0 {
		opts.ExtensionIDs = []string{extension.ID}
	}
	if opts.MaxFrameSize <= 0 {
		opts.MaxFrameSize = 512 << 20
	}
	if opts.ReconnectWait == 0 {
		opts.ReconnectWait = 10 * time.Second
	}
	lg := opts.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	tok := opts.Token
	if tok == "" {
		path := opts.TokenFile
		if path == "" {
			var err error
			if path, err = DefaultTokenFile(); err != nil {
				return nil, err
			}
		}
		var err error
		if tok, err = LoadOrCreateToken(path); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("bridge: listening on %s (is another livetab already running? stop it or choose another port): %w", opts.Addr, err)
	}
	b := &Bridge{
		opts:     opts,
		log:      lg,
		token:    tok,
		ln:       ln,
		mux:      http.NewServeMux(),
		ready:    make(chan struct{}),
		closedCh: make(chan struct{}),
	}
	b.mux.HandleFunc(ExtensionPath, b.serveExtension)
	b.srv = &http.Server{Handler: b.mux}
	connlimit.Bound(b.srv, connlimit.MaxConns)
	go b.srv.Serve(ln)
	context.AfterFunc(ctx, func() { b.Close() })
	lg.Info("bridge listening", "url", b.URL())
	return b, nil
}

// URL is the address the extension dials, ws://127.0.0.1:PORT/extension.
func (b *Bridge) URL() string { return "ws://" + b.ln.Addr().String() + ExtensionPath }

// Addr is the address the bridge listens on.
func (b *Bridge) Addr() net.Addr { return b.ln.Addr() }

// Token returns the pairing token, for writing the extension's config.
// Never log it.
func (b *Bridge) Token() string { return b.token }

// Handle mounts h on the bridge's HTTP server, so that other endpoints (the
// shared CDP endpoint of extcdp) live on the same loopback port. h does its
// own authentication.
func (b *Bridge) Handle(pattern string, h http.Handler) { b.mux.Handle(pattern, h) }

// Connected reports whether an extension is connected now.
func (b *Bridge) Connected() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.conn != nil
}

// Hello returns what the connected (or last connected) extension said in its
// hello, without its nonce.
func (b *Bridge) Hello() wire.HelloParams {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.hello
}

// WaitConnected waits until an extension is connected. Its error, when ctx
// ends first, says how to install and pair the extension.
func (b *Bridge) WaitConnected(ctx context.Context) error {
	b.mu.Lock()
	ready, closed, gone, why := b.ready, b.closed, b.gone, b.goneErr
	b.mu.Unlock()
	if closed {
		return ErrClosed
	}
	select {
	case <-ready:
		return nil
	case <-b.closedCh:
		return ErrClosed
	case <-gone:
		return b.exited(why)
	case <-ctx.Done():
		return fmt.Errorf("bridge at %s: %w (%w)", b.URL(), ErrNotConnected, ctx.Err())
	}
}

// Subscribe registers fn for every event frame of the extension, for
// [wire.Hello] when an extension connects and for [Disconnected]. fn runs on
// the bridge's reader goroutine, in the order the frames came, so it must
// not block. The returned func unsubscribes.
func (b *Bridge) Subscribe(fn func(*wire.Frame)) (unsubscribe func()) {
	b.subMu.Lock()
	defer b.subMu.Unlock()
	b.subSeq++
	id := b.subSeq
	var next []subscriber
	if old := b.subs.Load(); old != nil {
		next = append(next, *old...)
	}
	next = append(next, subscriber{id, fn})
	b.subs.Store(&next)
	return func() {
		b.subMu.Lock()
		defer b.subMu.Unlock()
		var keep []subscriber
		for _, s := range *b.subs.Load() {
			if s.id != id {
				keep = append(keep, s)
			}
		}
		b.subs.Store(&keep)
	}
}

type subscriber struct {
	id int
	fn func(*wire.Frame)
}

func (b *Bridge) publish(f *wire.Frame) {
	if p := b.subs.Load(); p != nil {
		for _, s := range *p {
			s.fn(f)
		}
	}
}

// Go sends f as a request and calls done with the reply, once, from the
// bridge's reader goroutine (or with an error when the extension goes away
// or ctx ends). It sets f.ID. When no extension is connected, Go first waits
// up to [Options.ReconnectWait]; if Go returns an error, done is not called.
func (b *Bridge) Go(ctx context.Context, f *wire.Frame, done func(*wire.Frame, error)) error {
	c, err := b.current(ctx)
	if err != nil {
		return err
	}
	return b.send(ctx, c, f, done)
}

// GoNow is Go without the wait for an extension that is away: with none
// connected it fails at once. It is for calls made under a lock, which
// must never wait out a reconnection.
func (b *Bridge) GoNow(f *wire.Frame, done func(*wire.Frame, error)) error {
	b.mu.Lock()
	c, last := b.conn, b.lastClose
	b.mu.Unlock()
	if c == nil {
		return b.notConnected(last)
	}
	return b.send(context.Background(), c, f, done)
}

func (b *Bridge) send(ctx context.Context, c *extConn, f *wire.Frame, done func(*wire.Frame, error)) error {
	f.ID = b.nextID.Add(1)
	data, err := wire.Encode(f)
	if err != nil {
		return err
	}
	p := &pending{done: done}
	if ctx.Done() != nil {
		id := f.ID
		p.stop = context.AfterFunc(ctx, func() {
			if c.take(id) != nil {
				done(nil, fmt.Errorf("livetab extension: %s: %w", f.Method, context.Cause(ctx)))
			}
		})
	}
	if err := c.add(f.ID, p); err != nil {
		return err
	}
	if err := c.write(data); err != nil {
		if c.take(f.ID) != nil {
			return fmt.Errorf("livetab extension: sending %s: %w", f.Method, err)
		}
	}
	return nil
}

// Call sends a request and waits for its reply. A reply that carries an
// error is returned as a *cdproto.Error, wrapped.
func (b *Bridge) Call(ctx context.Context, method string, tabID int64, params any) (jsonv2.Value, error) {
	f := &wire.Frame{Method: method, TabID: tabID}
	if params != nil {
		p, err := jsonv2.Marshal(params, wire.Options)
		if err != nil {
			return nil, fmt.Errorf("livetab extension: encoding %s: %w", method, err)
		}
		f.Params = p
	}
	type answer struct {
		f   *wire.Frame
		err error
	}
	ch := make(chan answer, 1)
	if err := b.Go(ctx, f, func(r *wire.Frame, err error) { ch <- answer{r, err} }); err != nil {
		return nil, err
	}
	a := <-ch
	if a.err != nil {
		return nil, a.err
	}
	if a.f.Error != nil {
		if tabID != 0 {
			return nil, fmt.Errorf("livetab extension: %s on tab %d: %w", method, tabID, a.f.Error)
		}
		return nil, fmt.Errorf("livetab extension: %s: %w", method, a.f.Error)
	}
	return a.f.Result, nil
}

// current returns the connected extension, waiting for one for up to
// ReconnectWait.
func (b *Bridge) current(ctx context.Context) (*extConn, error) {
	b.mu.Lock()
	c, ready, closed, last, gone, why, gaveUp := b.conn, b.ready, b.closed, b.lastClose, b.gone, b.goneErr, b.gaveUp
	b.mu.Unlock()
	if c != nil {
		return c, nil
	}
	if closed {
		return nil, ErrClosed
	}
	if b.opts.ReconnectWait < 0 || !gaveUp.IsZero() && time.Since(gaveUp) < b.opts.ReconnectWait {
		// A client's commands in a row, each waiting the whole wait, held
		// its last one for as many waits (TestAwayCallsWaitOnce).
		return nil, b.notConnected(last)
	}
	t := time.NewTimer(b.opts.ReconnectWait)
	defer t.Stop()
	select {
	case <-ready:
		b.mu.Lock()
		c = b.conn
		b.mu.Unlock()
		if c == nil {
			return nil, b.notConnected(last)
		}
		return c, nil
	case <-t.C:
		b.mu.Lock()
		if b.conn == nil && b.lastClose != "" {
			b.gaveUp = time.Now()
		}
		b.mu.Unlock()
		return nil, b.notConnected(last)
	case <-gone:
		return nil, b.exited(why)
	case <-b.closedCh:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the livetab extension: %w", context.Cause(ctx))
	}
}

func (b *Bridge) notConnected(last string) error {
	if last != "" {
		return &awayError{url: b.URL(), last: last, wait: b.opts.ReconnectWait}
	}
	return fmt.Errorf("bridge at %s: %w", b.URL(), ErrNotConnected)
}

// awayError is [ErrNotConnected] for an extension that was connected: it
// is installed and paired, and what keeps it away is most often its
// service worker, which Chrome stopped and starts again on its next event.
type awayError struct {
	url, last string
	wait      time.Duration
}

func (e *awayError) Error() string {
	wait := ""
	if e.wait > 0 {
		wait = fmt.Sprintf(" within %v", e.wait)
	}
	return fmt.Sprintf("bridge at %s: the livetab extension disconnected (%s) and did not come back%s: Chrome starts its service worker again on its next event, within 30 s at the latest (its alarm); retry then, and if it stays away, check the livetab popup", e.url, e.last, wait)
}

func (e *awayError) Is(target error) bool { return target == ErrNotConnected }

// Close stops the bridge, closes the extension's socket and fails every
// pending call.
func (b *Bridge) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	close(b.closedCh)
	c := b.conn
	b.mu.Unlock()
	if c != nil {
		c.ws.Close(wire.CloseBridgeShutdown, "the livetab bridge is shutting down")
	}
	return b.srv.Close()
}

// checkLoopback refuses any listen address that is not loopback.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("bridge: bad listen address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("bridge: refusing to listen on %q: livetab listens on loopback only (127.0.0.1); reach it from another machine through an SSH tunnel (ssh -L)", addr)
}

// LoopbackHost reports whether a Host header names this machine. Checking
// it stops DNS-rebinding pages from reaching a loopback server under
// another name.
func LoopbackHost(host string) bool {
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	h = strings.Trim(h, "[]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func (b *Bridge) originAllowed(origin string) bool {
	id, ok := strings.CutPrefix(origin, "chrome-extension://")
	if !ok {
		return false
	}
	for _, allowed := range b.opts.ExtensionIDs {
		if id == allowed {
			return true
		}
	}
	return false
}

func (b *Bridge) serveExtension(w http.ResponseWriter, r *http.Request) {
	if !LoopbackHost(r.Host) {
		b.log.Warn("refused an extension connection: Host is not loopback", "host", r.Host)
		http.Error(w, "livetab: Host must be 127.0.0.1 or localhost", http.StatusForbidden)
		return
	}
	origin := r.Header.Get("Origin")
	if !b.originAllowed(origin) {
		b.log.Warn("refused an extension connection: foreign Origin", "origin", origin)
		http.Error(w, "livetab: only the livetab extension may connect here (Origin "+strconv.Quote(origin)+" is not allowed)", http.StatusForbidden)
		return
	}
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: b.opts.ExtensionIDs})
	if err != nil {
		b.log.Warn("extension WebSocket upgrade failed", "err", err)
		return
	}
	// Until it has paired, any program may be on the other end (an Origin
	// header is only a header): its messages are a hello and a proof, and
	// only maxHandshakes of such connections stay (startShake). Each could
	// hold a whole chunk's buffer for the handshake's 10 s, and a program
	// that opened 400 held 470 MiB of livetab serve.
	ws.SetReadLimit(handshakeReadLimit)
	sh := b.startShake(ws)
	c := &extConn{ws: ws, pending: make(map[int64]*pending), shake: sh}
	hello, err := b.handshake(r.Context(), c)
	b.endShake(sh)
	if err != nil {
		return
	}
	ws.SetReadLimit(wire.ChunkSize + wire.ChunkHeader + 64<<10)
	b.log.Info("extension connected", "extension", hello.ExtensionID, "version", hello.Version, "attached", len(hello.Attached))
	reason := b.readLoop(c)
	b.drop(c, reason)
}

// Bounds of the connections that have not paired yet.
const (
	// handshakeReadLimit bounds a message before pairing: a hello (a few
	// names and the ids of the tabs the debugger holds, 40 KB for 5,000
	// tabs) or a proof.
	handshakeReadLimit = 64 << 10
	// maxHandshakes is how many connections may be pairing at once (at
	// most 64 MiB of messages on their way). Past it one goes, not the
	// newest: a program that kept that many open could otherwise keep the
	// extension out for good. So many that a program must open tens of
	// thousands a second to close the extension's within its few
	// milliseconds of pairing: one process that sent hellos and stalled,
	// redialing at once, reached 4,300 a second and, with 64, kept the
	// extension out (TestRedTeamHelloFlood).
	maxHandshakes = 1024
)

// shake is a connection pairing.
type shake struct {
	ws      *websocket.Conn
	helloAt time.Time // when its hello came (the extension sends it at once)
}

// proofWait is how long after its hello a pairing connection counts as
// stalled, first to go past maxHandshakes: the extension answers the
// challenge in milliseconds.
const proofWait = time.Second

// startShake notes ws as pairing; past maxHandshakes it closes, of the
// others, the oldest stalled past its hello (proofWait), else the oldest
// that has not sent its hello, else the oldest. The extension sends its
// hello as it connects and its proof as the challenge comes, so it stays
// through a flood of connections that send nothing: one program opening
// 3,000 a second kept the extension from pairing for 30 s in 3 of 6 runs
// when the oldest went first (TestRedTeamPairingFlood).
func (b *Bridge) startShake(ws *websocket.Conn) *shake {
	sh := &shake{ws: ws}
	b.mu.Lock()
	b.shaking = append(b.shaking, sh)
	var old *shake
	if len(b.shaking) > maxHandshakes {
		// Never the newcomer, which cannot have sent anything yet: with
		// every older one past its hello (a program that sends hellos and
		// stalls), the extension's connection went as it came.
		older := b.shaking[:len(b.shaking)-1]
		i, now := -1, time.Now()
		for j, x := range older {
			if !x.helloAt.IsZero() && now.Sub(x.helloAt) > proofWait {
				i = j // challenged and stalled: the extension answers at once
				break
			}
		}
		for j, x := range older {
			if i < 0 && x.helloAt.IsZero() {
				i = j
			}
		}
		if i < 0 {
			i = 0
		}
		old = b.shaking[i]
		b.shaking = append(b.shaking[:i], b.shaking[i+1:]...)
	}
	b.mu.Unlock()
	if old != nil {
		b.log.Debug("closed one of too many extension connections that have not paired")
		old.ws.CloseNow() // a close handshake would hold this connection up to 5 s
	}
	return sh
}

// helloCame notes that sh's hello came.
func (b *Bridge) helloCame(sh *shake) {
	b.mu.Lock()
	sh.helloAt = time.Now()
	b.mu.Unlock()
}

// endShake notes that sh is no longer pairing.
func (b *Bridge) endShake(sh *shake) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, x := range b.shaking {
		if x == sh {
			b.shaking = append(b.shaking[:i], b.shaking[i+1:]...)
			return
		}
	}
}

// handshake pairs with the extension (pairing.go) and makes c the
// bridge's connection. It closes ws itself when it refuses.
func (b *Bridge) handshake(ctx context.Context, c *extConn) (*wire.HelloParams, error) {
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	h, err := b.pair(hctx, c)
	if err != nil {
		return nil, err
	}
	hello := *h
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		c.ws.Close(wire.CloseBridgeShutdown, "the livetab bridge is shutting down")
		return nil, ErrClosed
	}
	if b.conn != nil {
		b.mu.Unlock()
		b.log.Warn("refused a second extension connection", "extension", hello.ExtensionID)
		c.ws.Close(wire.CloseAlreadyPaired, "livetab: another livetab extension is already connected to this bridge; disconnect it first")
		return nil, errors.New("already connected")
	}
	welcome, _ := wire.Encode(&wire.Frame{Method: wire.Welcome, Params: jsonv2.Value(`{"version":"` + Version + `"}`)})
	if err := c.write(welcome); err != nil {
		b.mu.Unlock()
		return nil, err
	}
	b.conn = c
	b.hello = hello
	b.gaveUp = time.Time{}
	close(b.ready)
	b.mu.Unlock()
	params, _ := jsonv2.Marshal(hello, wire.Options)
	b.publish(&wire.Frame{Method: wire.Hello, Params: params})
	return &hello, nil
}

// Version is the bridge's protocol version, sent in the welcome. 2: pairing
// by mutual proof instead of a token in the hello.
const Version = "2"

// readLoop reads frames until the socket ends and returns why it ended.
func (b *Bridge) readLoop(c *extConn) string {
	ctx := context.Background()
	chunks := reassembler{max: b.opts.MaxFrameSize}
	for {
		typ, data, err := c.ws.Read(ctx)
		if err != nil {
			return describeClose(err)
		}
		if typ == websocket.MessageBinary {
			frame, err := chunks.add(data)
			switch {
			case errors.Is(err, errFrameTooBig):
				c.ws.Close(wire.CloseTooBig, "livetab: "+err.Error())
				return "the extension sent " + err.Error()
			case err != nil:
				b.badFrame(c, err.Error())
				continue
			case frame == nil:
				continue
			}
			data = frame
		}
		f := new(wire.Frame)
		if err := wire.Decode(data, f); err != nil {
			b.badFrame(c, err.Error())
			continue
		}
		switch {
		case f.ID != 0 && f.Method == "":
			if p := c.take(f.ID); p != nil {
				p.finish(f, nil)
			}
		case f.Method == wire.Ping:
			c.write(pongFrame)
		case f.ID != 0:
			// The extension sends no requests; say so rather than let it wait.
			r, _ := wire.Encode(&wire.Frame{ID: f.ID, Error: &cdproto.Error{Code: -32601, Message: "livetab bridge: the extension may not send requests (" + f.Method + ")"}})
			c.write(r)
		default:
			b.publish(f)
		}
	}
}

var pongFrame = []byte(`{"method":"` + wire.Pong + `"}`)

// badFrame reports a malformed frame to the log and to the extension, and
// keeps the connection: one bad frame must not cost the pending calls.
func (b *Bridge) badFrame(c *extConn, why string) {
	b.log.Warn("dropped a malformed frame from the extension", "err", why)
	msg, _ := jsonv2.Marshal(why, wire.Options)
	c.write([]byte(`{"method":"ext.error","params":{"message":` + string(msg) + `}}`))
}

func describeClose(err error) string {
	if s := websocket.CloseStatus(err); s != -1 {
		var ce websocket.CloseError
		if errors.As(err, &ce) && ce.Reason != "" {
			return fmt.Sprintf("socket closed (%d %s)", s, ce.Reason)
		}
		if s == websocket.StatusMessageTooBig {
			return "the extension sent a message over the bridge's read limit"
		}
		return fmt.Sprintf("socket closed (%d)", s)
	}
	if errors.Is(err, io.EOF) {
		return "socket closed"
	}
	return err.Error()
}

// drop forgets c and fails every call that waits on it.
func (b *Bridge) drop(c *extConn, reason string) {
	c.ws.CloseNow()
	b.mu.Lock()
	if b.conn == c {
		b.conn = nil
		b.ready = make(chan struct{})
	}
	b.lastClose = reason
	b.mu.Unlock()
	b.log.Info("extension disconnected", "reason", reason)
	gone := fmt.Errorf("%w (%s)", ErrExtensionGone, reason)
	for _, p := range c.takeAll() {
		p.finish(nil, gone)
	}
	params, _ := jsonv2.Marshal(map[string]string{"reason": reason}, wire.Options)
	b.publish(&wire.Frame{Method: Disconnected, Params: params})
}

// extConn is one connected extension.
type extConn struct {
	ws      *websocket.Conn
	shake   *shake // while it pairs
	mu      sync.Mutex
	pending map[int64]*pending
	dead    bool
}

type pending struct {
	done func(*wire.Frame, error)
	stop func() bool
}

// finish answers a call that the caller claimed with take; whoever takes a
// pending call is the only one to answer it.
func (p *pending) finish(f *wire.Frame, err error) {
	if p.stop != nil {
		p.stop()
	}
	p.done(f, err)
}

func (c *extConn) add(id int64, p *pending) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		if p.stop != nil {
			p.stop()
		}
		return ErrExtensionGone
	}
	c.pending[id] = p
	return nil
}

func (c *extConn) take(id int64) *pending {
	c.mu.Lock()
	p := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	return p
}

func (c *extConn) takeAll() []*pending {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dead = true
	all := make([]*pending, 0, len(c.pending))
	for id, p := range c.pending {
		all = append(all, p)
		delete(c.pending, id)
	}
	return all
}

// writeTimeout bounds one write to the extension: a worker that stopped
// reading is cut off (and redials) instead of holding every caller.
const writeTimeout = 30 * time.Second

func (c *extConn) write(data []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	return c.ws.Write(ctx, websocket.MessageText, data)
}
