package connlimit

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// open dials srv and, when ask, asks it one thing and keeps the
// connection idle.
func open(t *testing.T, addr string, ask bool) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if ask {
		c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	return c
}

func closed(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	_, err := c.Read(make([]byte, 1))
	ne, ok := err.(net.Error)
	return !(ok && ne.Timeout())
}

// Past the bound, the oldest idle connection goes first, then the oldest
// that has not sent its headers; one in the middle of a request stays.
func TestEvictionOrder(t *testing.T) {
	busy := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/busy" {
			<-busy
		}
	}))
	Bound(srv.Config, 3)
	srv.Start()
	defer srv.Close()
	defer close(busy) // before the server's close, which waits for it
	addr := srv.Listener.Addr().String()

	active := open(t, addr, false)
	active.Write([]byte("GET /busy HTTP/1.1\r\nHost: x\r\n\r\n"))
	time.Sleep(100 * time.Millisecond)
	fresh := open(t, addr, false) // no headers yet
	time.Sleep(50 * time.Millisecond)
	idle := open(t, addr, true)
	time.Sleep(50 * time.Millisecond)

	open(t, addr, false) // the 4th: the idle one goes
	if !closed(idle) || closed(fresh) || closed(active) {
		t.Fatalf("the 4th connection: idle closed %v, fresh closed %v, active closed %v; want only the idle one", closed(idle), closed(fresh), closed(active))
	}
	open(t, addr, false) // the 5th: no idle one left, the oldest fresh goes
	if !closed(fresh) || closed(active) {
		t.Fatalf("the 5th connection: fresh closed %v, active closed %v; want the fresh one", closed(fresh), closed(active))
	}
}

// A program sends a request's headers announcing a body it never sends,
// to a handler that refuses it unread (a request without the token). The
// server reads what is left of the body before it replies: without a
// deadline each such connection stayed open for good, past the bound
// (cmd/livetab's TestRedTeamZZBUnsentBodyHoldsConnections). A WebSocket's
// connection (hijacked) gets no deadline of the server's.
func TestUnsentBodyClosesAfterHandler(t *testing.T) {
	defer func(d time.Duration) { afterHandler = d }(afterHandler)
	afterHandler = 300 * time.Millisecond
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hijack" {
			c, rw, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			go func() {
				defer c.Close()
				time.Sleep(time.Second) // past afterHandler
				rw.WriteString("still here")
				rw.Flush()
			}()
			return
		}
		http.Error(w, "no token", http.StatusUnauthorized)
	}))
	Bound(srv.Config, 512)
	srv.Start()
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	var conns []net.Conn
	// Before the server's close, which waits for connections mid-request.
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 20 {
		c := open(t, addr, false)
		c.Write([]byte("POST /json/version HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n"))
		conns = append(conns, c)
	}
	h := open(t, addr, false)
	h.Write([]byte("GET /hijack HTTP/1.1\r\nHost: x\r\n\r\n"))
	time.Sleep(afterHandler + 500*time.Millisecond)
	open := 0
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err := io.Copy(io.Discard, c); err != nil {
			open++ // no end of the connection within 2 s more
		}
	}
	if open > 0 {
		t.Errorf("%d of %d connections whose request's body never came are still open well past the deadline", open, len(conns))
	}
	h.SetReadDeadline(time.Now().Add(3 * time.Second))
	got, _ := io.ReadAll(h)
	if string(got) != "still here" {
		t.Errorf("the hijacked connection read %q, want %q: the server's deadline cut it", got, "still here")
	}
}
