package extcdp_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/coder/websocket"

	"github.com/livetab/livetab/extension"
	"github.com/livetab/livetab/internal/wire"
	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamTransferReadsHoldUnboundedHeap: one client opens its 8
// transfers from the page, posts their 8 MiB itself (it has the tokens;
// Origin: null is a header), and sends 4 reads of 8 MiB on each at once,
// the most the relay let in flight per transfer. The reads run off the
// client's lane, each with its own 8 MiB buffer and its base64 reply: the
// relay's heap grew by 500-840 MiB. Now a client has at most 4 reads in
// flight over all its transfers, and 4 reads of all clients hold a buffer
// at once. The client reads its socket and discards.
func TestRedTeamTransferReadsHoldUnboundedHeap(t *testing.T) {
	srv, tok := endpoint(t)
	url := env.Relay.BrowserURL(strings.TrimPrefix(srv.URL, "http://"), tok)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(1 << 30)

	var mu sync.Mutex
	waiting := map[int64]chan []byte{}
	var big, bigErr atomic.Int64
	gone := make(chan struct{})
	var why atomic.Value
	go func() {
		defer close(gone)
		for {
			_, rd, err := ws.Reader(context.Background())
			if err != nil {
				why.Store(err.Error())
				return
			}
			head := make([]byte, 64<<10)
			n, _ := io.ReadFull(rd, head)
			if n == len(head) {
				io.Copy(io.Discard, rd)
				big.Add(1)
				continue
			}
			var m struct {
				ID    int64           `json:"id"`
				Error *map[string]any `json:"error"`
			}
			jsonv2.Unmarshal(head[:n], &m, wire.Options)
			if m.Error != nil {
				bigErr.Add(1)
			}
			mu.Lock()
			ch := waiting[m.ID]
			delete(waiting, m.ID)
			mu.Unlock()
			if ch != nil {
				ch <- append([]byte(nil), head[:n]...)
			}
		}
	}()
	var next atomic.Int64
	send := func(method string, params any, wait bool) []byte {
		id := next.Add(1)
		ch := make(chan []byte, 1)
		if wait {
			mu.Lock()
			waiting[id] = ch
			mu.Unlock()
		}
		b, _ := jsonv2.Marshal(map[string]any{"id": id, "method": method, "params": params}, wire.Options)
		if err := ws.Write(ctx, websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
		if !wait {
			return nil
		}
		select {
		case r := <-ch:
			return r
		case <-ctx.Done():
			t.Fatalf("%s: no reply", method)
		}
		return nil
	}

	const size = 8 << 20
	body := bytes.Repeat([]byte("z"), size)
	var ids []string
	for range 8 {
		r := send(livetabcdp.CommandOpenTransfer, map[string]any{"direction": livetabcdp.TransferFromPage, "size": size}, true)
		var res struct {
			Result livetabcdp.OpenTransferResult `json:"result"`
		}
		if err := jsonv2.Unmarshal(r, &res, wire.Options); err != nil || res.Result.Transfer == "" {
			t.Fatalf("openTransfer: %s", r)
		}
		loop := strings.TrimPrefix(res.Result.FrameURL, "chrome-extension://"+extension.ID+"/transfer.html#")
		if code, _ := get(t, "POST", loop, "null", body); code != http.StatusNoContent {
			t.Fatalf("posting the transfer's bytes: %d", code)
		}
		ids = append(ids, res.Result.Transfer)
	}
	body = nil

	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	peak.Store(base)
	for _, id := range ids {
		for range 4 {
			send(livetabcdp.CommandReadTransfer, map[string]any{"transfer": id, "size": size}, false)
		}
	}
	deadline := time.Now().Add(90 * time.Second)
wait:
	for big.Load()+bigErr.Load() < 32 && time.Now().Before(deadline) {
		select {
		case <-gone:
			time.Sleep(2 * time.Second) // the reads already started go on
			t.Logf("the relay disconnected the client: %v", why.Load())
			break wait
		case <-time.After(50 * time.Millisecond):
		}
	}
	close(stop)
	<-done
	grew := (peak.Load() - base) >> 20
	t.Logf("32 reads of 8 MiB: %d large replies, %d errors; the relay's process heap in use peaked %d MiB above its start", big.Load(), bigErr.Load(), grew)
	if grew > 200 {
		t.Errorf("one client's 32 reads of 8 MiB (8 transfers x 4 in flight) held %d MiB of the heap; a flood of nearly-1 MiB commands is held under 200 MiB (TestRedTeamManyNearlyLargeCommands), and 128 clients may each do this", grew)
	}
	_ = fmt.Sprint
}
