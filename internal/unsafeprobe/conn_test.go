package unsafeprobe

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/coder/websocket"
)

type msg struct {
	ID        int64           `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

type conn struct {
	ws      *websocket.Conn
	mu      sync.Mutex
	next    int64
	waiters map[int64]chan msg
	events  chan msg
}

func dial(ctx context.Context, url string) (*conn, error) {
	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		return nil, err
	}
	ws.SetReadLimit(64 << 20)
	c := &conn{ws: ws, waiters: map[int64]chan msg{}, events: make(chan msg, 1000)}
	go func() {
		for {
			_, data, err := ws.Read(context.Background())
			if err != nil {
				close(c.events)
				return
			}
			var m msg
			json.Unmarshal(data, &m)
			if m.Method != "" {
				select {
				case c.events <- m:
				default:
				}
				continue
			}
			c.mu.Lock()
			w := c.waiters[m.ID]
			c.mu.Unlock()
			if w != nil {
				w <- m
			}
		}
	}()
	return c, nil
}

func (c *conn) call(timeout time.Duration, sid, method string, params any) (msg, error) {
	c.mu.Lock()
	c.next++
	id := c.next
	w := make(chan msg, 1)
	c.waiters[id] = w
	c.mu.Unlock()
	p, _ := json.Marshal(params)
	if params == nil {
		p = []byte("{}")
	}
	b, _ := json.Marshal(msg{ID: id, Method: method, SessionID: sid, Params: p})
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := c.ws.Write(ctx, websocket.MessageText, b); err != nil {
		return msg{}, err
	}
	select {
	case m := <-w:
		return m, nil
	case <-ctx.Done():
		return msg{}, fmt.Errorf("no reply to %s in %v", method, timeout)
	}
}
