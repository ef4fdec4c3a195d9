package extcdp_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/livetab/livetab/extension"
	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamTwoCapturesOnOneConnection: one program (one chromedp
// browser connection, so one relay client) captures two blobs at once
// through the transfer channel, each the way capture.Channel reads when it
// cannot read the relay's file (another machine or user): 3 reads of 2 MiB
// ahead (capture's pageDepth), sent as the page starts posting. Each
// capture alone keeps 3 reads in flight, under the old bound of 4 per
// transfer; the new bound of 4 per connection over all its transfers
// refuses the 5th and 6th at once ("reads of this connection's transfers
// are in flight") and the second capture fails, though the relay holds at
// most readsAtOnce buffers anyway.
func TestRedTeamTwoCapturesOnOneConnection(t *testing.T) {
	srv, tok := endpoint(t)
	c := dialRawTo(t, srv, tok)
	const chunk = 2 << 20
	const size = 3 * chunk
	type tr struct{ id, loop string }
	var trs []tr
	for range 2 {
		res := c.must("", livetabcdp.CommandOpenTransfer, map[string]any{"direction": livetabcdp.TransferFromPage, "size": size})
		loop := strings.TrimPrefix(field(res, "frameUrl"), "chrome-extension://"+extension.ID+"/transfer.html#")
		trs = append(trs, tr{field(res, "transfer"), loop})
	}
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for i, x := range trs {
		for k := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				m, err := c.send("", livetabcdp.CommandReadTransfer, map[string]any{"transfer": x.id, "offset": k * chunk, "size": chunk})
				switch {
				case err != nil:
					errs <- fmt.Sprintf("capture %d, read %d: %v", i, k, err)
				case m.Error != nil:
					errs <- fmt.Sprintf("capture %d, read %d: %s", i, k, m.Error.Message)
				default:
					return
				}
			}()
		}
	}
	time.Sleep(300 * time.Millisecond) // the reads are in; the pages post
	for _, x := range trs {
		go func() {
			req, _ := http.NewRequest("POST", x.loop, bytes.NewReader(bytes.Repeat([]byte{7}, size)))
			req.Header.Set("Origin", "null")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	close(errs)
	n := 0
	for e := range errs {
		n++
		t.Errorf("a read of two captures on one connection (3 reads ahead each): %s", e)
	}
	if n > 0 {
		t.Errorf("%d of 6 reads failed, want every read answered with its bytes once posted", n)
	}
}

// TestRedTeamFiveCapturesByFileOnOneConnection: capture.Channel on the
// browser's machine reads the relay's file and asks Livetab.transferFile
// for more once it caught up; that call waits (up to transferTTL) for the
// page's next bytes and counts as a read in flight. Five captures at once
// on one connection (five tabs of one chromedp browser) each wait on one:
// the fifth is refused at once and its capture fails, where before each
// transfer had its own bound.
func TestRedTeamFiveCapturesByFileOnOneConnection(t *testing.T) {
	srv, tok := endpoint(t)
	c := dialRawTo(t, srv, tok)
	const size = 1 << 20
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	var loops []string
	for i := range 5 {
		res := c.must("", livetabcdp.CommandOpenTransfer, map[string]any{"direction": livetabcdp.TransferFromPage, "size": size})
		loops = append(loops, strings.TrimPrefix(field(res, "frameUrl"), "chrome-extension://"+extension.ID+"/transfer.html#"))
		id := field(res, "transfer")
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := c.send("", livetabcdp.CommandTransferFile, map[string]any{"transfer": id})
			switch {
			case err != nil:
				errs <- fmt.Sprintf("capture %d: %v", i, err)
			case m.Error != nil:
				errs <- fmt.Sprintf("capture %d: %s", i, m.Error.Message)
			}
		}()
	}
	time.Sleep(300 * time.Millisecond) // the five wait for their pages' posts
	for _, loop := range loops {
		go func() {
			req, _ := http.NewRequest("POST", loop, bytes.NewReader(bytes.Repeat([]byte{7}, size)))
			req.Header.Set("Origin", "null")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("Livetab.transferFile of five captures on one connection: %s", e)
	}
}
