package extcdp

import (
	"context"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
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

	// MaxMessageSize bounds one client message. Default 256 MiB: Playwright
	// sends its injected scripts and uploads inline.
	MaxMessageSize int64

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
		opts.MaxMessageSize = 256 << 20
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &endpoint{r: r, opts: opts}
}

type endpoint struct {
	r    *Relay
	opts HandlerOptions

	mu      sync.Mutex
	clients int
}

func (e *endpoint) ServeHTTP(w http.ResponseWriter, req *http.Request) {
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
	case strings.HasPrefix(path, "/devtools/browser/"):
		e.serveClient(w, req)
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
		"Browser":              product(h.UserAgent),
		"Protocol-Version":     "1.3",
		"User-Agent":           h.UserAgent,
		"V8-Version":           "",
		"WebKit-Version":       "",
		"webSocketDebuggerUrl": e.r.BrowserURL(req.Host, e.opts.Token),
	})
}

func (e *endpoint) list(w http.ResponseWriter, req *http.Request) {
	if err := e.r.refreshTabs(req.Context()); err != nil {
		http.Error(w, "livetab: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	e.r.mu.Lock()
	list := []map[string]string{}
	for _, t := range e.r.tabs {
		if t.targetID == "" {
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
	if e.opts.SingleClient {
		e.mu.Lock()
		busy := e.clients > 0
		if !busy {
			e.clients++
		}
		e.mu.Unlock()
		if busy {
			http.Error(w, "livetab: another client is connected (single-client mode)", http.StatusConflict)
			return
		}
		defer func() {
			e.mu.Lock()
			e.clients--
			e.mu.Unlock()
		}()
	}
	ws, err := websocket.Accept(w, req, nil)
	if err != nil {
		return
	}
	ws.SetReadLimit(e.opts.MaxMessageSize)
	c := e.r.NewClient()
	ctx, cancel := context.WithCancel(context.Background())
	// Browser.close ends this connection, never the user's browser; the
	// pause lets the writer send the reply first.
	c.OnBrowserClose = func() { time.AfterFunc(100*time.Millisecond, cancel) }
	e.opts.Logger.Info("CDP client connected", "remote", req.RemoteAddr)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var buf []byte
		for {
			m, err := c.Next(ctx)
			if err != nil {
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
		}
	}()
	for {
		typ, data, err := ws.Read(ctx)
		if err != nil {
			break
		}
		m := new(cdproto.Message)
		if typ != websocket.MessageText {
			continue
		}
		if err := jsonv2.Unmarshal(data, m, wire.Options); err != nil {
			// Answer what can be answered: Chrome replies -32700 to junk.
			c.deliver(&cdproto.Message{ID: 0, Method: "", Error: &cdproto.Error{Code: -32700, Message: "livetab: message is not valid JSON: " + err.Error()}})
			continue
		}
		if m.Method == "" {
			c.fail(m.ID, m.SessionID, -32600, "livetab: a message needs a method")
			continue
		}
		c.Handle(m)
	}
	cancel()
	c.Close()
	<-done
	ws.Close(websocket.StatusNormalClosure, "")
	e.opts.Logger.Info("CDP client disconnected", "remote", req.RemoteAddr)
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
	if m.ID != 0 {
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
