package extcdp

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/coder/websocket"

	"github.com/livetab/livetab/bridge"
	"github.com/livetab/livetab/internal/wire"
)

// HandlerOptions configure the shared CDP endpoint.
type HandlerOptions struct {
	// Token is required from every request, as "Authorization: Bearer T"
	// or as "?token=T" in the URL for clients that cannot set headers
	// (Playwright's connectOverCDP and Puppeteer's connect take the URL).
	Token string

	// SingleClient refuses a second client while one is connected.
	SingleClient bool

	// MaxMessageSize bounds one client message. Default 100 MiB: Playwright
	// sends files inline, up to 50 MB before base64. Messages over 1 MiB
	// are read one at a time across all clients, so that many large ones
	// at once cannot add up.
	MaxMessageSize int64

	// MaxQueue bounds what one client leaves unread (replies and events);
	// a client past it is disconnected with a close reason that says so,
	// and the others are not affected. Default 64 MiB.
	MaxQueue int64

	// MaxTotalQueue bounds what all clients together leave unread; past
	// it, a client holding more than an eighth of MaxQueue is cut.
	// Default 256 MiB.
	MaxTotalQueue int64

	// MaxInFlight is how many commands one client may have unanswered;
	// past it the endpoint reads no more from that client until replies
	// come back. Default 1024.
	MaxInFlight int64

	// MaxTabs bounds the tabs one client may have open (those it opened
	// with Target.createTarget and the popups they opened): each costs the
	// person's browser a renderer. Past it createTarget fails until the
	// client closes some. Default 300.
	MaxTabs int

	// MaxClients bounds the connected clients: each may hold up to 1 MiB
	// of a message it has not finished sending. Past it a new connection
	// gets 503. Default 128.
	MaxClients int

	// PingInterval is how often a client is pinged; one that has not
	// answered two pings in a row, each by the next, is disconnected. A
	// client whose process stopped (SIGSTOP, a breakpoint, a hung event
	// loop) keeps its connection open and reads nothing, and what it set
	// on the person's tabs (requests held by Fetch, a pause in the
	// debugger, emulation) would stay until it went. Every CDP client
	// library answers pings while it reads. Default 30 s; negative: no
	// pings.
	PingInterval time.Duration

	// Logger receives connection events; never the token.
	Logger *slog.Logger
}

// Handler serves the relay as a standard CDP endpoint, the way Chrome
// serves --remote-debugging-port: GET /json/version and /json/list, and the
// browser WebSocket at /devtools/browser/<id>; also GET /livetab/status
// (see [Relay.Status]). Unmodified clients connect
// to it: chromedp's remote.NewAllocator, Playwright's connectOverCDP,
// Puppeteer's connect. Each WebSocket is one [Client] of the same relay.
//
// Every request must carry the token and name a loopback Host (against DNS
// rebinding); a request from a web page (an Origin header) is refused, and
// no CORS headers are ever sent.
func (r *Relay) Handler(opts HandlerOptions) http.Handler {
	if opts.MaxMessageSize <= 0 {
		opts.MaxMessageSize = 100 << 20
	}
	if opts.PingInterval == 0 {
		opts.PingInterval = 30 * time.Second
	}
	if opts.MaxQueue <= 0 {
		opts.MaxQueue = defaultMaxQueue
	}
	if opts.MaxTotalQueue <= 0 {
		opts.MaxTotalQueue = defaultMaxTotalQueue
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = defaultMaxInFlight
	}
	if opts.MaxClients <= 0 {
		opts.MaxClients = defaultMaxClients
	}
	if opts.MaxTabs <= 0 {
		opts.MaxTabs = defaultMaxTabs
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &endpoint{r: r, opts: opts, pending: newBudget(maxPendingTotal)}
}

type endpoint struct {
	r    *Relay
	opts HandlerOptions

	mu      sync.Mutex
	clients int

	queued atomic.Int64 // unread bytes of every client
	// big is the turn for one large message to be read and handled; a
	// channel, so that a client waiting for it can still go away.
	big     chan struct{}
	bigOnce sync.Once
	// pending is what every client's messages read and not yet handed on
	// hold (pending.go).
	pending *budget
}

func (e *endpoint) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if e.r.isClosed() {
		http.Error(w, "livetab: this endpoint's relay is closed; restart `livetab serve`", http.StatusServiceUnavailable)
		return
	}
	if !bridge.LoopbackHost(req.Host) {
		e.opts.Logger.Warn("refused a CDP request: Host is not loopback", "host", req.Host)
		http.Error(w, "livetab: the Host must be 127.0.0.1 or localhost", http.StatusForbidden)
		return
	}
	if o := req.Header.Get("Origin"); o != "" {
		e.opts.Logger.Warn("refused a CDP request from a web page", "origin", o)
		http.Error(w, "livetab: requests from web pages are not allowed", http.StatusForbidden)
		return
	}
	if strings.TrimSuffix(req.URL.Path, "/") == "/livetab/proof" {
		e.proof(w, req)
		return
	}
	if !e.authorized(req) {
		e.opts.Logger.Warn("refused a CDP request: missing or wrong token", "path", req.URL.Path)
		http.Error(w, "livetab: missing or wrong token; use the URL printed by `livetab endpoint` (it carries ?token=)", http.StatusUnauthorized)
		return
	}
	path := strings.TrimSuffix(req.URL.Path, "/")
	switch {
	case path == "/json/version":
		e.version(w, req)
	case path == "/json/list" || path == "/json":
		e.list(w, req)
	case path == "/livetab/status":
		e.status(w, req)
	case path == "/devtools/browser/"+string(e.r.browserID):
		e.serveClient(w, req)
	case strings.HasPrefix(path, "/devtools/"):
		http.Error(w, "livetab: no such target; the browser endpoint is the webSocketDebuggerUrl of /json/version", http.StatusNotFound)
	default:
		http.NotFound(w, req)
	}
}

func (e *endpoint) authorized(req *http.Request) bool {
	tok := req.URL.Query().Get("token")
	if h, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer "); ok {
		tok = h
	}
	return tok != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(e.opts.Token)) == 1
}

// BrowserURL is the WebSocket URL of the relay's browser endpoint on host,
// with the token in it, as /json/version reports it.
func (r *Relay) BrowserURL(host, token string) string {
	return "ws://" + host + "/devtools/browser/" + string(r.browserID) + "?token=" + url.QueryEscape(token)
}

func (e *endpoint) version(w http.ResponseWriter, req *http.Request) {
	h := e.r.b.Hello()
	writeJSON(w, map[string]string{
		"Browser":              product(h.UserAgent, h.FullVersion),
		"Protocol-Version":     "1.3",
		"User-Agent":           h.UserAgent,
		"V8-Version":           "",
		"WebKit-Version":       "",
		"webSocketDebuggerUrl": e.r.BrowserURL(localHost(req), e.opts.Token),
	})
}

// proof answers GET /livetab/proof?nonce=N, the one request that needs no
// token: it proves that this serve holds the token before a client sends
// it (bridge.EndpointProof, livetab.Probe). N is the client's fresh nonce;
// the port is the one the request came in on, never the Host header.
func (e *endpoint) proof(w http.ResponseWriter, req *http.Request) {
	nonce := req.URL.Query().Get("nonce")
	la, _ := req.Context().Value(http.LocalAddrContextKey).(net.Addr)
	ta, _ := la.(*net.TCPAddr)
	if len(nonce) != 64 || strings.Trim(nonce, "0123456789abcdef") != "" || ta == nil {
		http.Error(w, "livetab: /livetab/proof needs nonce=64 lowercase hex digits", http.StatusBadRequest)
		return
	}
	writeJSON(w, map[string]string{"proof": bridge.EndpointProof(e.opts.Token, ta.Port, nonce)})
}

// localHost is the address the request came in on: a client that named
// the endpoint by another loopback name (localhost, [::1]) is given the
// address that is really listening.
func localHost(req *http.Request) string {
	if a, ok := req.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if ap, err := netip.ParseAddrPort(a.String()); err == nil && ap.Addr().Unmap().IsLoopback() {
			return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()).String()
		}
	}
	return req.Host
}

func (e *endpoint) list(w http.ResponseWriter, req *http.Request) {
	if err := e.r.refreshTabs(req.Context()); err != nil {
		http.Error(w, "livetab: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	e.r.mu.Lock()
	list := []map[string]string{}
	for _, t := range e.r.tabs {
		// A request here is no client: it sees the person's tabs only.
		if t.targetID == "" || t.creator != nil {
			continue
		}
		list = append(list, map[string]string{
			"description": "",
			"id":          string(t.targetID),
			"title":       t.info.Title,
			"type":        "page",
			"url":         t.info.URL,
		})
	}
	e.r.mu.Unlock()
	writeJSON(w, list)
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := jsonv2.Marshal(v, wire.Options)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.Write(b)
}

func (e *endpoint) serveClient(w http.ResponseWriter, req *http.Request) {
	e.mu.Lock()
	single := e.opts.SingleClient && e.clients > 0
	full := e.clients >= e.opts.MaxClients
	if !single && !full {
		e.clients++
	}
	e.mu.Unlock()
	switch {
	case single:
		http.Error(w, "livetab: another client is connected (single-client mode)", http.StatusConflict)
		return
	case full:
		e.opts.Logger.Warn("refused a CDP client: too many connected", "max", e.opts.MaxClients)
		http.Error(w, fmt.Sprintf("livetab: %d clients are connected, the most this endpoint serves; close some and retry", e.opts.MaxClients), http.StatusServiceUnavailable)
		return
	}
	defer func() {
		e.mu.Lock()
		e.clients--
		e.mu.Unlock()
	}()
	ws, err := websocket.Accept(w, req, nil)
	if err != nil {
		return
	}
	ws.SetReadLimit(e.opts.MaxMessageSize)
	c := e.r.NewClient()
	ctx, cancel := context.WithCancel(context.Background())
	// Under qmu: the client is the relay's already, and Relay.Close may
	// close it from another goroutine, reading its limits.
	c.qmu.Lock()
	c.limits = &queueLimits{max: e.opts.MaxQueue, total: &e.queued, maxTotal: e.opts.MaxTotalQueue, overflow: func(reason string) {
		e.opts.Logger.Warn("CDP client disconnected: it does not read", "remote", req.RemoteAddr, "why", reason)
		// A close reason holds 123 bytes at most.
		ws.Close(websocket.StatusPolicyViolation, "livetab: too much left unread; read the socket while you send")
		cancel()
	}}
	c.qmu.Unlock()
	c.r.mu.Lock()
	c.maxTabs = e.opts.MaxTabs
	c.r.mu.Unlock()
	// Browser.close ends this connection, never the user's browser; the
	// pause lets the writer send the reply first.
	c.OnBrowserClose = func() { time.AfterFunc(100*time.Millisecond, cancel) }
	c.SetName(clientName(req))
	// A client the person stopped reads the errors of the commands it had
	// on their way, then the connection ends with the reason.
	c.onStop = func() {
		time.AfterFunc(stopGrace, func() {
			ws.Close(websocket.StatusPolicyViolation, "livetab: stopped by the person in the livetab popup")
			cancel()
		})
	}
	e.opts.Logger.Info("CDP client connected", "remote", req.RemoteAddr)
	var g gate
	if e.opts.PingInterval > 0 {
		go e.keepAlive(ctx, ws, cancel, req.RemoteAddr, &g)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var buf []byte
		for {
			m, err := c.Next(ctx)
			if err != nil {
				if errors.Is(err, ErrClientClosed) && e.r.isClosed() {
					ws.Close(websocket.StatusGoingAway, "livetab: the relay closed")
					cancel()
				}
				return
			}
			buf, err = appendMessage(buf[:0], m)
			if err != nil {
				e.opts.Logger.Warn("encoding a CDP message", "err", err)
				continue
			}
			if err := ws.Write(ctx, websocket.MessageText, buf); err != nil {
				cancel()
				return
			}
			if cap(buf) > 1<<20 {
				buf = nil // one large reply does not pin its buffer
			}
		}
	}()
	mine := newBudget(maxPendingPerClient)
	for {
		g.close()
		if err := c.waitInFlight(ctx, e.opts.MaxInFlight); err != nil {
			break
		}
		if mine.wait(ctx) != nil || e.pending.wait(ctx) != nil {
			break
		}
		g.open()
		typ, data, unlock, err := e.read(ctx, ws, &g)
		if err != nil {
			break
		}
		n := int64(len(data))
		mine.add(n)
		e.pending.add(n)
		c.sent() // whatever the message, exactly one reply goes back
		e.handle(c, typ, data, func() {
			unlock()
			mine.add(-n)
			e.pending.add(-n)
		})
	}
	cancel()
	c.Close()
	<-done
	ws.Close(websocket.StatusNormalClosure, "")
	e.opts.Logger.Info("CDP client disconnected", "remote", req.RemoteAddr)
}

// keepAlive pings the client every PingInterval and disconnects it when
// two pings in a row go unanswered until the next.
// A pong is read only while the endpoint reads the client, so a ping
// that went unanswered while the endpoint held back on its own account
// (see gate), for less than two intervals, does not count; nor does one
// while the client sent: a client that sends is alive, and one that sends
// and never reads is cut by MaxQueue.
func (e *endpoint) keepAlive(ctx context.Context, ws *websocket.Conn, cancel context.CancelFunc, remote string, g *gate) {
	every := e.opts.PingInterval
	t := time.NewTicker(every)
	defer t.Stop()
	missed := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		start := time.Now()
		pctx, pcancel := context.WithTimeout(ctx, every)
		err := ws.Ping(pctx)
		pcancel()
		if ctx.Err() != nil {
			return
		}
		// Only a ping that waited its whole interval counts: one that
		// could not be written (the writer busy with a large reply to a
		// client slow to read, which MaxQueue bounds) says nothing of the
		// client's process.
		if err == nil || !errors.Is(err, context.DeadlineExceeded) || time.Since(start) < every*9/10 || g.excuses(start, 2*every) {
			missed = 0
			continue
		}
		// Two in a row: a client slowed down by a busy machine answers
		// the next.
		if missed++; missed < 2 {
			continue
		}
		e.opts.Logger.Warn("CDP client disconnected: it answered no ping", "remote", remote, "wait", every)
		// The client's hold on the person's tabs ends at once; the close
		// frame, which a stopped client may never take, follows.
		go ws.Close(websocket.StatusPolicyViolation, fmt.Sprintf("livetab: no answer to a ping in %v; keep reading the socket", every))
		cancel()
		return
	}
}

// gate notes when the endpoint stops reading a client on its own account:
// the client's commands in flight or the unhandled bytes are at their
// bounds, or its large message waits for its turn. A pong the client sent
// meanwhile waits unread.
type gate struct {
	shutAt atomic.Int64 // when it closed, in UnixNano; 0 while open
	opened atomic.Int64 // when it last opened, in UnixNano
}

func (g *gate) close() { g.shutAt.CompareAndSwap(0, time.Now().UnixNano()) }

func (g *gate) open() {
	g.opened.Store(time.Now().UnixNano())
	g.shutAt.Store(0)
}

// excuses says whether a ping sent at t and unanswered is excused: the
// gate was closed at some moment since, but has not stayed closed for
// limit. A client that stopped reading with its commands in flight at
// the bound (each waiting on a promise that never settles) kept the gate
// closed, and was never cut (red team, 2026-11-30).
func (g *gate) excuses(t time.Time, limit time.Duration) bool {
	if at := g.shutAt.Load(); at != 0 {
		return time.Since(time.Unix(0, at)) < limit
	}
	return g.opened.Load() >= t.UnixNano()
}

// stopGrace is how long a client the person stopped stays connected to
// read why its commands fail.
const stopGrace = time.Second

// clientName is the name the person sees for an endpoint client: the
// client parameter of its URL (…/devtools/browser/ID?token=T&client=NAME),
// else its User-Agent.
func clientName(req *http.Request) string {
	if n := req.URL.Query().Get("client"); n != "" {
		return n
	}
	if ua := req.Header.Get("User-Agent"); ua != "" {
		return ua
	}
	return "CDP client"
}

// bigMessage is the size past which a client message waits for its turn.
const bigMessage = 1 << 20

// bigReadTimeout bounds how long a large message may take to arrive once
// it holds the turn: 100 MiB over loopback takes well under a second, and a
// client that stalls in the middle of one must not hold up every other
// client's large messages. Past it the client is disconnected.
var bigReadTimeout = 20 * time.Second

// read reads one message. One over bigMessage is read and handled only
// while it holds e.big: a large message costs a few copies of itself on
// its way to the extension, and many at once must not add up. unlock
// releases it after handling.
func (e *endpoint) read(ctx context.Context, ws *websocket.Conn, g *gate) (websocket.MessageType, []byte, func(), error) {
	e.bigOnce.Do(func() { e.big = make(chan struct{}, 1) })
	// The message's own context: cancelling it mid-message closes the
	// connection, which is what a stalled large message gets.
	mctx, mcancel := context.WithCancel(ctx)
	defer mcancel()
	typ, rd, err := ws.Reader(mctx)
	if err != nil {
		return 0, nil, nil, err
	}
	buf := make([]byte, 0, 4096)
	for len(buf) <= bigMessage {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := rd.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return typ, buf, func() {}, nil
		}
		if err != nil {
			return 0, nil, nil, err
		}
	}
	g.close()
	select {
	case e.big <- struct{}{}:
	case <-ctx.Done():
		return 0, nil, nil, ctx.Err()
	}
	g.open()
	unlock := func() { <-e.big }
	stall := time.AfterFunc(bigReadTimeout, mcancel)
	rest, err := io.ReadAll(rd)
	stall.Stop()
	if err != nil {
		unlock()
		return 0, nil, nil, err
	}
	return typ, append(buf, rest...), unlock, nil
}

// zeroID stands for a client's id 0 inside the relay, where 0 means "no
// id" (events). appendMessage writes it back as 0.
const zeroID = math.MinInt64

// handle answers one client message: a command goes to the relay; anything
// else gets the error Chrome would give, with the id when there is one.
// unlock runs once the message went on its way.
func (e *endpoint) handle(c *Client, typ websocket.MessageType, data []byte, unlock func()) {
	handed := false
	defer func() {
		if !handed {
			unlock()
		}
	}()
	if typ != websocket.MessageText {
		c.fail(0, "", -32700, "livetab: binary WebSocket messages are not CDP; send each command as a JSON text message")
		return
	}
	m := new(cdproto.Message)
	if err := jsonv2.Unmarshal(data, m, wire.Options); err != nil {
		// A command whose id reads but whose other fields don't (a
		// number for a sessionId) is answered under its id, as Chrome
		// does: a client waiting on that id would otherwise wait forever.
		var probe struct {
			ID *int64 `json:"id"`
		}
		id, code := int64(0), int64(-32700)
		// encoding/json takes what jsonv2 refuses but is still JSON with
		// an id: a name given twice (red team: no answer at all).
		if jsonv2.Unmarshal(data, &probe, wire.Options) == nil || json.Valid(data) && json.Unmarshal(data, &probe) == nil {
			code = -32600 // JSON, but not a command's shape
			switch {
			case probe.ID == nil || *probe.ID == zeroID:
			case *probe.ID == 0:
				id = zeroID
			default:
				id = *probe.ID
			}
		}
		c.fail(id, "", code, "livetab: message is not a valid CDP command: "+err.Error())
		return
	}
	if string(m.Params) == "null" {
		m.Params = nil
	}
	if m.ID == zeroID {
		// zeroID stands for id 0: an answer under it would go out as the
		// answer to the client's command 0, and none under its own id.
		// Chrome takes ids of 32 bits and answers a larger one as this,
		// with no id.
		c.fail(0, m.SessionID, -32600, "livetab: id -9223372036854775808 is out of range: use ids that fit in 32 bits, as Chrome does")
		return
	}
	if m.ID == 0 {
		var probe struct {
			ID *int64 `json:"id"`
		}
		if jsonv2.Unmarshal(data, &probe, wire.Options) != nil || probe.ID == nil {
			c.fail(0, m.SessionID, -32600, "livetab: a command needs an integer id")
			return
		}
		m.ID = zeroID
	}
	if m.Method == "" {
		c.fail(m.ID, m.SessionID, -32600, "livetab: a command needs a method")
		return
	}
	if m.Result != nil || m.Error != nil || m.Params != nil && (len(m.Params) == 0 || m.Params[0] != '{') {
		c.fail(m.ID, m.SessionID, -32602, "livetab: a command has an object of params and no result or error")
		return
	}
	handed = true
	c.enqueue(m, unlock)
}

// appendMessage encodes m by hand: cdproto.Message's omitempty would drop
// an empty result object ({}), which clients need to see.
func appendMessage(buf []byte, m *cdproto.Message) ([]byte, error) {
	buf = append(buf, '{')
	sep := false
	field := func(name string) {
		if sep {
			buf = append(buf, ',')
		}
		sep = true
		buf = append(buf, '"')
		buf = append(buf, name...)
		buf = append(buf, '"', ':')
	}
	switch m.ID {
	case 0:
	case zeroID:
		field("id")
		buf = append(buf, '0')
	default:
		field("id")
		buf = strconv.AppendInt(buf, m.ID, 10)
	}
	if m.SessionID != "" {
		field("sessionId")
		buf = appendJSONString(buf, string(m.SessionID))
	}
	if m.Method != "" {
		field("method")
		buf = appendJSONString(buf, string(m.Method))
	}
	if len(m.Params) > 0 {
		field("params")
		buf = append(buf, m.Params...)
	}
	if m.Error != nil {
		field("error")
		b, err := jsonv2.Marshal(m.Error, wire.Options)
		if err != nil {
			return buf, err
		}
		buf = append(buf, b...)
	} else if m.ID != 0 && m.Method == "" {
		field("result")
		if len(m.Result) > 0 {
			buf = append(buf, m.Result...)
		} else {
			buf = append(buf, '{', '}')
		}
	}
	return append(buf, '}'), nil
}
