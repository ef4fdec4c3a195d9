package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/coder/websocket"
)

// serveRSSBound is what a serve may hold at its peak while 30 programs
// work, one floods without reading and one sends a 200 MB message: the
// limits of extcdp (64 MiB unread per client, 256 MiB in all, messages of
// 100 MiB at most, read one large one at a time) keep it well below.
const serveRSSBound = 512 << 20

// The load the issue "trust" names: every reply of the well-behaved
// clients arrives, the bad ones are cut off with a reason, and serve's
// memory stays bounded.
func TestLoadHeld(t *testing.T) {
	if testing.Short() {
		t.Skip("the load test runs in the full suite")
	}
	needShared(t) // Chromium is there
	s := startServe(t, newHome(t), "--addr", "127.0.0.1:0", "--launch=headless")
	defer s.interrupt()
	url := s.ep.URL
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	// The flooder sends evaluates with 64 KiB results and never reads.
	flood := make(chan error, 1)
	go func() {
		ws, _, err := websocket.Dial(ctx, url, nil)
		if err != nil {
			flood <- err
			return
		}
		defer ws.CloseNow()
		c := &rawClient{ws: ws}
		sid, err := openSession(ctx, c)
		if err != nil {
			flood <- err
			return
		}
		wctx, wcancel := context.WithTimeout(ctx, 3*time.Minute)
		defer wcancel()
		for i := 0; ; i++ {
			if _, err := c.send(wctx, sid, "Runtime.evaluate", map[string]any{"expression": `"x".repeat(65536)`, "returnByValue": true}); err != nil {
				flood <- fmt.Errorf("cut off after %d commands: %w", i, err)
				return
			}
		}
	}()

	// The giant sends one 200 MB message.
	giant := make(chan error, 1)
	go func() {
		ws, _, err := websocket.Dial(ctx, url, nil)
		if err != nil {
			giant <- err
			return
		}
		defer ws.CloseNow()
		msg := make([]byte, 0, 200<<20+100)
		msg = append(msg, `{"id":1,"method":"Browser.getVersion","params":{"x":"`...)
		msg = append(msg, strings.Repeat("a", 200<<20)...)
		msg = append(msg, `"}}`...)
		if err := ws.Write(ctx, websocket.MessageText, msg); err != nil {
			giant <- err
			return
		}
		_, _, err = ws.Read(ctx)
		giant <- err
	}()

	const clients, commands = 30, 1000
	var wg sync.WaitGroup
	var answered atomic.Int64
	errs := make(chan error, clients)
	for i := range clients {
		wg.Go(func() {
			if err := wellBehaved(ctx, url, i, commands, &answered); err != nil {
				errs <- fmt.Errorf("client %d: %w", i, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := answered.Load(); n != clients*commands {
		t.Errorf("%d of %d replies arrived", n, clients*commands)
	}

	select {
	case err := <-flood:
		if err == nil || !strings.Contains(err.Error(), "cut off") {
			t.Errorf("the flooder: %v", err)
		}
		t.Logf("flooder: %v", err)
	case <-ctx.Done():
		t.Error("the flooder was never cut off")
	}
	select {
	case err := <-giant:
		var ce websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.StatusMessageTooBig {
			t.Errorf("the 200 MB message: %v, want close 1009 (message too big)", err)
		}
	case <-ctx.Done():
		t.Error("the 200 MB message was never refused")
	}

	peak, rss := procMem(t, s.cmd.Process.Pid)
	t.Logf("serve memory: peak RSS %d MiB, now %d MiB (bound %d MiB)", peak>>20, rss>>20, serveRSSBound>>20)
	fmt.Printf("load: %d clients x %d commands, a flooder, a 200 MB message: serve peak RSS %d MiB (bound %d MiB)\n", clients, commands, peak>>20, serveRSSBound>>20)
	if peak > serveRSSBound {
		t.Errorf("serve's peak RSS %d MiB is over the bound %d MiB", peak>>20, serveRSSBound>>20)
	}
	// A client after all that is served as usual.
	if err := wellBehaved(ctx, url, 99, 10, new(atomic.Int64)); err != nil {
		t.Errorf("a client after the load: %v", err)
	}
}

// openSession opens a tab for c and attaches to it.
func openSession(ctx context.Context, c *rawClient) (string, error) {
	var created struct {
		TargetID string `json:"targetId"`
	}
	if err := c.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &created); err != nil {
		return "", err
	}
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	if err := c.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": created.TargetID, "flatten": true}, &attached); err != nil {
		return "", err
	}
	return attached.SessionID, nil
}

// wellBehaved opens a tab and evaluates n expressions in it, eight in
// flight at a time, checking every reply.
func wellBehaved(ctx context.Context, url string, who, n int, answered *atomic.Int64) error {
	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		return err
	}
	defer ws.CloseNow()
	ws.SetReadLimit(16 << 20)
	c := &rawClient{ws: ws}
	sid, err := openSession(ctx, c)
	if err != nil {
		return err
	}
	want := map[int64]int{}
	sent, got := 0, 0
	for got < n {
		for sent < n && sent-got < 8 {
			id, err := c.send(ctx, sid, "Runtime.evaluate", map[string]any{"expression": fmt.Sprintf("%d*1000+%d", who, sent), "returnByValue": true})
			if err != nil {
				return err
			}
			want[id] = who*1000 + sent
			sent++
		}
		_, data, err := ws.Read(ctx)
		if err != nil {
			return fmt.Errorf("after %d replies: %w", got, err)
		}
		var reply struct {
			ID     int64 `json:"id"`
			Result struct {
				Result struct {
					Value int `json:"value"`
				} `json:"result"`
			} `json:"result"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if jsonv2.Unmarshal(data, &reply) != nil || reply.ID == 0 {
			continue // an event
		}
		v, ok := want[reply.ID]
		switch {
		case !ok:
			return fmt.Errorf("a reply to id %d, never sent or answered twice", reply.ID)
		case reply.Error != nil:
			return fmt.Errorf("command %d: %s", reply.ID, reply.Error.Message)
		case reply.Result.Result.Value != v:
			return fmt.Errorf("command %d: %d, want %d", reply.ID, reply.Result.Result.Value, v)
		}
		delete(want, reply.ID)
		got++
		answered.Add(1)
	}
	return nil
}

// procMem reads a process's peak and current resident memory.
func procMem(t *testing.T, pid int) (peak, now int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("reading serve's memory: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmHWM":
			peak = kb << 10
		case "VmRSS":
			now = kb << 10
		}
	}
	return peak, now
}
