package connlimit

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// A program without the token sends, on connection after connection, a
// request's headers announcing a body it never sends (566f331's case).
// Each is now closed afterHandler (10 s) after its handler returns, but
// for those 10 s it is "active", which the bound never evicts: how many
// does the server hold at once, against max, from one process opening
// connections as fast as it can (one goroutine) for 8 s? 7120 of 7165
// (max 64) before the bound closed connections whose handler returned;
// 69 after.
func TestRedTeamUnsentBodiesPeakPastMax(t *testing.T) {
	var open, peak atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no token", http.StatusUnauthorized)
	}))
	const max = 64
	Bound(srv.Config, max)
	prev := srv.Config.ConnState
	srv.Config.ConnState = func(c net.Conn, st http.ConnState) {
		prev(c, st)
		switch st {
		case http.StateNew:
			if n := open.Add(1); n > peak.Load() {
				peak.Store(n)
			}
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}
	srv.Start()
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	req := []byte("POST /json/version HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
	for end := time.Now().Add(8 * time.Second); time.Now().Before(end) && len(conns) < 20000; {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Logf("dial: %v", err)
			break
		}
		c.Write(req)
		conns = append(conns, c)
		time.Sleep(200 * time.Microsecond)
	}
	time.Sleep(500 * time.Millisecond)
	t.Logf("%d connections opened in 8 s; the server holds %d now, %d at the peak (max %d)", len(conns), open.Load(), peak.Load(), max)
	if p := peak.Load(); p > 4*max {
		t.Errorf("a program without the token had the server hold %d connections at once (bound %d): each unsent body is held %v, active, never evicted", p, max, afterHandler)
	}
}
