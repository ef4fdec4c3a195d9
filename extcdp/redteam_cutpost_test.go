package extcdp_test

import (
	"bufio"
	"fmt"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamCutPostFailsReads: the page's post of a transfer from the
// page is cut short (Chrome killed mid-capture, the tab closed, the
// transfer frame removed): the relay sees the post end short, and the
// transfer, claimed, can never get its bytes. A program's Livetab.readTransfer
// and Livetab.transferFile waiting for the missing bytes must fail then,
// saying so, not wait out the transfer's TTL (2 minutes) for bytes that
// cannot come.
func TestRedTeamCutPostFailsReads(t *testing.T) {
	ctx := newTab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(site.URL+"/form?rt-cutpost")); err != nil {
		t.Fatal(err)
	}
	const size = 4 << 20
	res, loop := openTransfer(t, ctx, livetabcdp.TransferFromPage, size)
	defer chromedp.Call(ctx, livetabcdp.CloseTransfer, livetabcdp.CloseTransferParams{Transfer: res.Transfer})

	// The post: as the transfer page sends it, cut after 1 MiB.
	u, _ := url.Parse(loop)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(conn)
	fmt.Fprintf(w, "POST %s HTTP/1.1\r\nHost: %s\r\nOrigin: null\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n", u.RequestURI(), u.Host, size)
	w.Write(make([]byte, 1<<20))
	w.Flush()

	type answer struct {
		what string
		err  error
		took time.Duration
	}
	answers := make(chan answer, 2)
	var cut time.Time
	start := make(chan struct{})
	go func() {
		_, err := chromedp.Call(ctx, livetabcdp.ReadTransfer, livetabcdp.ReadTransferParams{Transfer: res.Transfer, Offset: 3 << 20, Size: 16})
		<-start
		answers <- answer{"readTransfer at 3 MiB", err, time.Since(cut)}
	}()
	go func() {
		_, err := chromedp.Call(ctx, livetabcdp.TransferFile, livetabcdp.TransferFileParams{Transfer: res.Transfer, Offset: 2 << 20})
		<-start
		answers <- answer{"transferFile past 2 MiB", err, time.Since(cut)}
	}()
	time.Sleep(500 * time.Millisecond)
	cut = time.Now()
	conn.(*net.TCPConn).SetLinger(0)
	conn.Close() // RST, as a killed browser's socket
	close(start)

	const bound = 15 * time.Second
	timer := time.After(bound)
	for i := 0; i < 2; i++ {
		select {
		case a := <-answers:
			t.Logf("%s: after %v: %v", a.what, a.took.Round(time.Millisecond), a.err)
			if a.err == nil {
				t.Errorf("%s succeeded though the post was cut", a.what)
			}
		case <-timer:
			t.Fatalf("a read of the missing bytes still waits %v after the page's post was cut short (the relay answered the post 'ended short'); it waits out the transfer's TTL", bound)
		}
	}
	// And the relay still answers this tab.
	if v, err := chromedp.Run(ctx, chromedp.Evaluate[int]("6*7")); err != nil || v != 42 {
		t.Fatalf("the tab no longer answers: %v %v", v, err)
	}
}
