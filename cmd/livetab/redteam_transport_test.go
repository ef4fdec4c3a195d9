package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/livetab/livetab/extension"
	"github.com/livetab/livetab/internal/connlimit"
)

func envN(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// A program without the token sends complete request headers that
// announce a small body and never sends the body. serve answers 401 at
// once but net/http, before it writes the answer, waits to discard the
// unread body (up to 256 KiB) with no read deadline (no ReadTimeout): the
// connection stays "active", which connlimit never evicts, and neither the
// header nor the idle timeout applies. Before connlimit gave that discard
// a deadline, 2922 of 3000 stayed open after 12 s, 72 MiB (4 of 4 runs;
// 18382 of 19960 at 374 MiB).
func TestRedTeamUnsentBodyHoldsConnections(t *testing.T) {
	needShared(t)
	s := startServe(t, newHome(t), "--addr", "127.0.0.1:0", "--launch=headless")
	defer s.interrupt()
	addr := strings.TrimPrefix(s.ep.HTTP, "http://")
	_, before := procMem(t, s.cmd.Process.Pid)
	n := envN("ZZB_CONNS", 3000)
	req := "GET /json/version HTTP/1.1\r\nHost: " + addr + "\r\nContent-Length: 1000\r\n\r\n"
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < n; i++ {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			t.Logf("connection %d: %v", i, err)
			break
		}
		c.Write([]byte(req))
		conns = append(conns, c)
		// Give serve the moment to read the headers: a connection still
		// without them when the next arrives may be evicted.
		time.Sleep(time.Duration(envN("ZZB_GAP_US", 1500)) * time.Microsecond)
	}
	// Past the header timeout (10 s); the idle timeout (30 s) does not
	// apply to a request in progress.
	wait := time.Duration(envN("ZZB_WAIT", 12)) * time.Second
	time.Sleep(wait)
	peak, after := procMem(t, s.cmd.Process.Pid)
	open := stillOpen(conns)
	t.Logf("%d connections with an unsent body; after %v %d still open; serve RSS %d → %d MiB (peak %d)", len(conns), wait, open, before>>20, after>>20, peak>>20)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, s.ep.URL, nil)
	if err != nil {
		t.Errorf("an honest client cannot connect beside them: %v", err)
	} else {
		ws.CloseNow()
	}
	if open > connlimit.MaxConns+4 {
		t.Errorf("serve keeps %d connections of a program without the token open (requests whose body never comes), want at most %d", open, connlimit.MaxConns)
	}
}

// wsUpgrade opens a raw WebSocket to the bridge's /extension with the
// livetab extension's Origin (any program can send it) and returns the
// connection once upgraded.
func wsUpgrade(addr string) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return nil, err
	}
	var k [16]byte
	rand.Read(k[:])
	req := "GET /extension HTTP/1.1\r\nHost: " + addr + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: " + base64.StdEncoding.EncodeToString(k[:]) + "\r\n" +
		"Origin: chrome-extension://" + extension.ID + "\r\n\r\n"
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte(req)); err != nil {
		c.Close()
		return nil, err
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		c.Close()
		return nil, err
	}
	if resp.StatusCode != 101 {
		c.Close()
		return nil, &net.AddrError{Err: "status " + resp.Status, Addr: addr}
	}
	c.SetDeadline(time.Time{})
	return c, nil
}

// A program without the token, claiming to be the extension (its Origin
// is only a header), opens many WebSockets on the bridge's /extension and
// on each starts a text message of just under the bridge's read limit
// (1 MiB + 69 KiB) that it never finishes. The bridge reads the hello of
// each for up to 10 s, without any bound on how many handshakes run at
// once (upgraded connections leave connlimit's count). What does it cost
// serve, and does the real extension stay connected? 468-485 MiB (3 of 3
// runs) before the bridge bounded a message before pairing (256 KiB) and
// the connections pairing at once (16).
func TestRedTeamHandshakeMemory(t *testing.T) {
	needShared(t)
	s := startServe(t, newHome(t), "--addr", "127.0.0.1:0", "--launch=headless")
	defer s.interrupt()
	addr := strings.TrimPrefix(s.ep.HTTP, "http://")
	_, before := procMem(t, s.cmd.Process.Pid)
	n := envN("ZZB_HANDSHAKES", 400)
	const declared = 1<<20 + 60<<10
	const sent = 1<<20 + 50<<10
	payload := make([]byte, sent) // zero mask: sent as is
	for i := range payload {
		payload[i] = 'a'
	}
	hdr := []byte{0x81, 0x80 | 127, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint64(hdr[2:10], declared)
	var mu sync.Mutex
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	start := time.Now()
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := wsUpgrade(addr)
			if err != nil {
				return
			}
			c.SetWriteDeadline(time.Now().Add(5 * time.Second))
			c.Write(hdr)
			c.Write(payload)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}()
	}
	wg.Wait()
	took := time.Since(start)
	time.Sleep(500 * time.Millisecond)
	peak, after := procMem(t, s.cmd.Process.Pid)
	t.Logf("%d unpaired handshakes each holding %d KiB of an unfinished hello (opened in %v): serve RSS %d → %d MiB (peak %d)", len(conns), sent>>10, took.Round(time.Millisecond), before>>20, after>>20, peak>>20)

	// The real extension still works: a client's command reaches it.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, s.ep.URL, nil)
	if err != nil {
		t.Errorf("an honest client cannot connect: %v", err)
	} else {
		ws.Write(ctx, websocket.MessageText, []byte(`{"id":1,"method":"Target.getTargets"}`))
		if _, data, err := ws.Read(ctx); err != nil || !strings.Contains(string(data), `"id":1`) {
			t.Errorf("an honest client's command: %s %v", data, err)
		}
		ws.CloseNow()
	}
	if peak > 256<<20 {
		t.Errorf("serve's peak RSS %d MiB with %d unpaired /extension handshakes of a program without the token, want under 256 MiB", peak>>20, len(conns))
	}
}
