package connlimit

import (
	"bufio"
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
