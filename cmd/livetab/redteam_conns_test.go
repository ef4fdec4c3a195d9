package main

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/livetab/livetab/internal/connlimit"
)

// holdIdle opens n connections to addr, asks each for path once (no
// token) and keeps it open, idle, as a keep-alive client may. It returns
// the connections that got an answer.
func holdIdle(t *testing.T, addr, path string, n int) []net.Conn {
	t.Helper()
	var conns []net.Conn
	req := "GET " + path + " HTTP/1.1\r\nHost: " + addr + "\r\n\r\n"
	for i := 0; i < n; i++ {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Logf("connection %d: %v", i, err)
			break
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write([]byte(req)); err != nil {
			c.Close()
			continue
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			c.Close()
			continue
		}
		resp.Body.Close()
		c.SetDeadline(time.Time{})
		conns = append(conns, c)
	}
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	return conns
}

// stillOpen counts the connections the server has not closed.
func stillOpen(conns []net.Conn) int {
	n := 0
	one := make([]byte, 1)
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(time.Millisecond))
		_, err := c.Read(one)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			n++
		}
	}
	return n
}

// A program on the machine opens thousands of connections to serve
// without the token, asks each one thing and keeps them open, idle:
// serve must not keep them (each is a goroutine, buffers and a file
// descriptor, and past the descriptor limit neither the extension nor any
// program could connect any more). It closes idle connections after a
// while and keeps at most a bounded number of them open, the oldest idle
// going first, so an honest client still connects.
func TestRedTeamIdleConnectionsAreBounded(t *testing.T) {
	needShared(t)
	s := startServe(t, newHome(t), "--addr", "127.0.0.1:0", "--launch=headless")
	defer s.interrupt()
	addr := strings.TrimPrefix(s.ep.HTTP, "http://")
	_, before := procMem(t, s.cmd.Process.Pid)
	conns := holdIdle(t, addr, "/json/version", 4000)
	time.Sleep(time.Second)
	peak, after := procMem(t, s.cmd.Process.Pid)
	open := stillOpen(conns)
	t.Logf("%d idle connections answered; %d still open; serve RSS %d → %d MiB (peak %d)", len(conns), open, before>>20, after>>20, peak>>20)
	// The attack is thousands; a few over the bound are connections the
	// server accepted as the count moved (CI once saw 513 under load, and
	// 512 in every run alone), not a leak.
	if open > connlimit.MaxConns+4 {
		t.Errorf("serve keeps %d idle connections of a program without the token open, want at most %d", open, connlimit.MaxConns)
	}

	// The same program now sends long headers it never ends, on 600 more
	// connections: what serve reads of them is bounded too.
	var slow []net.Conn
	pad := "X-Pad: " + strings.Repeat("p", 500<<10) + "\r\n"
	for i := 0; i < 600; i++ {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			break
		}
		defer c.Close()
		c.SetWriteDeadline(time.Now().Add(2 * time.Second))
		c.Write([]byte("GET /json/version HTTP/1.1\r\nHost: " + addr + "\r\n" + pad))
		slow = append(slow, c)
	}
	time.Sleep(time.Second)
	peak, after = procMem(t, s.cmd.Process.Pid)
	t.Logf("%d connections with 500 KiB of unfinished headers each: serve RSS %d MiB (peak %d)", len(slow), after>>20, peak>>20)
	if peak > 128<<20 {
		t.Errorf("serve's peak RSS %d MiB after unfinished headers, want under 128 MiB", peak>>20)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, s.ep.URL, nil)
	if err != nil {
		t.Fatalf("an honest client cannot connect beside the idle connections: %v", err)
	}
	ws.CloseNow()
}
