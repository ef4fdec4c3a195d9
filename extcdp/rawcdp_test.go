package extcdp_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/coder/websocket"

	"github.com/livetab/livetab/internal/wire"
)

// rawClient speaks CDP to the endpoint by hand, as an arbitrary program on
// the machine would: no library smooths over what the relay sends.
type rawClient struct {
	t  testing.TB
	ws *websocket.Conn

	mu      sync.Mutex
	next    int64
	waiting map[int64]chan rawMsg
	events  []rawMsg
	evs     chan rawEvent // the events again, for tests that wait on them
	closed  chan struct{}
	// bound is how long a command may wait for its reply; 20 s unless a
	// test holds the relay to less.
	bound time.Duration
}

type rawEvent struct {
	Method    string       `json:"method"`
	SessionID string       `json:"sessionId"`
	Params    jsonv2.Value `json:"params"`
}

type rawMsg struct {
	ID        int64        `json:"id"`
	SessionID string       `json:"sessionId"`
	Method    string       `json:"method"`
	Params    jsonv2.Value `json:"params"`
	Result    jsonv2.Value `json:"result"`
	Error     *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// dialRaw connects a raw client to the test browser's endpoint.
func dialRaw(t *testing.T) *rawClient {
	t.Helper()
	srv, tok := endpoint(t)
	return dialRawTo(t, srv, tok)
}

// dialRawTo connects a raw client to the endpoint srv serves.
func dialRawTo(t *testing.T, srv *httptest.Server, tok string) *rawClient {
	t.Helper()
	return dialRawURL(t, env.Relay.BrowserURL(strings.TrimPrefix(srv.URL, "http://"), tok))
}

// dialRawURL connects a raw client to a browser WebSocket URL.
func dialRawURL(t testing.TB, url string) *rawClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(64 << 20)
	c := &rawClient{t: t, ws: ws, waiting: map[int64]chan rawMsg{}, evs: make(chan rawEvent, 1024), closed: make(chan struct{}), bound: 20 * time.Second}
	go c.read()
	t.Cleanup(func() { ws.CloseNow() })
	return c
}

func (c *rawClient) read() {
	defer close(c.closed)
	for {
		_, data, err := c.ws.Read(context.Background())
		if err != nil {
			return
		}
		var m rawMsg
		if jsonv2.Unmarshal(data, &m, wire.Options) != nil {
			continue
		}
		c.mu.Lock()
		if ch := c.waiting[m.ID]; m.ID != 0 && m.Method == "" && ch != nil {
			delete(c.waiting, m.ID)
			ch <- m
		} else if m.Method != "" {
			c.events = append(c.events, m)
			select {
			case c.evs <- rawEvent{m.Method, m.SessionID, m.Params}:
			default:
			}
		}
		c.mu.Unlock()
	}
}

// send sends a command and returns its reply as it came, error included;
// err is for a reply that did not come within c.bound.
func (c *rawClient) send(session, method string, params any) (rawMsg, error) {
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan rawMsg, 1)
	c.waiting[id] = ch
	c.mu.Unlock()
	msg := map[string]any{"id": id, "method": method}
	if session != "" {
		msg["sessionId"] = session
	}
	if params != nil {
		msg["params"] = params
	}
	b, _ := jsonv2.Marshal(msg, wire.Options)
	ctx, cancel := context.WithTimeout(context.Background(), c.bound)
	defer cancel()
	if err := c.ws.Write(ctx, websocket.MessageText, b); err != nil {
		return rawMsg{}, err
	}
	select {
	case m := <-ch:
		return m, nil
	case <-c.closed:
		return rawMsg{}, fmt.Errorf("%s: connection closed", method)
	case <-ctx.Done():
		return rawMsg{}, fmt.Errorf("%s: no reply within %v", method, c.bound)
	}
}

// call sends a command and returns its result, or its error as an error.
func (c *rawClient) call(session, method string, params any) (jsonv2.Value, error) {
	m, err := c.send(session, method, params)
	if err != nil {
		return nil, err
	}
	if m.Error != nil {
		return nil, fmt.Errorf("%s: %d %s", method, m.Error.Code, m.Error.Message)
	}
	return m.Result, nil
}

func (c *rawClient) must(session, method string, params any) jsonv2.Value {
	c.t.Helper()
	res, err := c.call(session, method, params)
	if err != nil {
		c.t.Fatal(err)
	}
	return res
}

// field reads one string field of a JSON object.
func field(v jsonv2.Value, name string) string {
	var m map[string]any
	jsonv2.Unmarshal(v, &m, wire.Options)
	s, _ := m[name].(string)
	return s
}

// hasEvent reports whether an event method received so far mentions s.
func (c *rawClient) hasEvent(method, s string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.events {
		if e.Method == method && strings.Contains(string(e.Params), s) {
			return true
		}
	}
	return false
}

// seen reports whether any event received so far mentions s.
func (c *rawClient) seen(s string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.events {
		if strings.Contains(string(e.Params), s) || e.SessionID == s {
			return true
		}
	}
	return false
}

func unmarshal(v jsonv2.Value, out any) error { return jsonv2.Unmarshal(v, out, wire.Options) }
