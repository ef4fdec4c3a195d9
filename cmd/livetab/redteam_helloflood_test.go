package main

import (
	"crypto/rand"
	"encoding/binary"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/extension"
	"github.com/livetab/livetab/internal/wire"
)

// WriteText writes one masked WebSocket text frame.
func writeMaskedText(c net.Conn, p []byte) error {
	h := []byte{0x81}
	switch {
	case len(p) < 126:
		h = append(h, 0x80|byte(len(p)))
	case len(p) < 1<<16:
		h = append(h, 0x80|126, byte(len(p)>>8), byte(len(p)))
	default:
		h = append(h, 0x80|127)
		h = binary.BigEndian.AppendUint64(h, uint64(len(p)))
	}
	var m [4]byte
	rand.Read(m[:])
	h = append(h, m[:]...)
	b := make([]byte, len(p))
	for i := range p {
		b[i] = p[i] ^ m[i%4]
	}
	_, err := c.Write(append(h, b...))
	return err
}

// A local program without the token holds HELLOFLOOD (70) connections on
// /extension, each of which sends a valid-looking hello (a fresh 64-hex
// nonce) and then stalls instead of answering the challenge; when the
// bridge closes one (its 10 s), it dials again. Every pairing slot is then
// one whose hello came, and the rule "past 64, the oldest without a hello
// goes" picked the connection that had just arrived: the real extension's,
// before its hello (3 of 3 runs unpaired at 30 s; with the newcomer spared
// but still 64 slots, the redials reached 4,300 a second and the extension
// still did not pair, 2 of 2). With 1,024 slots, a stalled one going first,
// it paired in 2.0-2.1 s (1.9 s with no flood; 4.9 s under 1,100).
func TestRedTeamHelloFlood(t *testing.T) {
	needShared(t)
	n := envN("HELLOFLOOD", 70)
	if envN("FLOOD_OFF", 0) == 1 {
		n = 0
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var hellos, fails atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				c, err := wsUpgrade(addr)
				if err != nil {
					fails.Add(1)
					time.Sleep(5 * time.Millisecond)
					continue
				}
				params, _ := jsonv2.Marshal(wire.HelloParams{Nonce: wire.NewNonce(), Version: "9.9.9", ExtensionID: extension.ID}, wire.Options)
				msg, _ := wire.Encode(&wire.Frame{Method: wire.Hello, Params: params})
				if writeMaskedText(c, msg) != nil {
					c.Close()
					continue
				}
				hellos.Add(1)
				done := make(chan struct{})
				go func() {
					var b [512]byte
					for {
						if _, err := c.Read(b[:]); err != nil {
							break
						}
					}
					close(done)
				}()
				select {
				case <-done:
				case <-stop:
				}
				c.Close()
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()
	start := time.Now()
	s, err := newHome(t).serve("--addr", addr, "--launch=headless")
	took := time.Since(start)
	t.Logf("%d stalling hello connections: %d hellos sent (%d failed dials) in %v", n, hellos.Load(), fails.Load(), took.Round(time.Millisecond))
	if err != nil {
		t.Fatalf("under %d stalling connections that each sent a hello (%d hellos), the real extension did not pair in %v: %v",
			n, hellos.Load(), took.Round(time.Millisecond), trimLog(err.Error()))
	}
	defer s.interrupt()
	t.Logf("the extension paired %v after serve started", took.Round(time.Millisecond))
}
