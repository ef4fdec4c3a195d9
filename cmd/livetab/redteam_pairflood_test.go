package main

import (
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A program without the token floods the bridge's /extension with
// WebSocket upgrades (the extension's Origin is only a header) from the
// moment serve listens: 8 goroutines of one process, each upgrading as
// fast as it can and holding the connection until the bridge closes it.
// With at most 16 pairing at once, the oldest closed past that (93e0e1a),
// the real extension of the launched Chromium did not pair within serve's
// 30 s in 3 of 6 runs; with 64, the oldest that sent no hello closed
// first, it paired in 3.2-4.8 s (3 of 3; 3.1 s with no flood).
// FLOOD_OFF=1 is the control.
func TestRedTeamPairingFlood(t *testing.T) {
	needShared(t)
	workers := envN("FLOOD", 8)
	if v := envN("FLOOD_OFF", 0); v == 1 {
		workers = 0
	}
	// A free loopback port for serve, known to the flood in advance (as
	// the default 127.0.0.1:9339 is).
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var upgrades, fails atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
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
					time.Sleep(2 * time.Millisecond)
					continue
				}
				upgrades.Add(1)
				go func() {
					// Held until the bridge closes it (or the flood ends).
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
				}()
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()
	start := time.Now()
	s, err := newHome(t).serve("--addr", addr, "--launch=headless")
	took := time.Since(start)
	t.Logf("flood of %d workers: %d upgrades (%d failed dials) in %v", workers, upgrades.Load(), fails.Load(), took.Round(time.Millisecond))
	if err != nil {
		t.Fatalf("under a flood of /extension upgrades from one process (%d upgrades, %.0f/s), the real extension did not pair: %v",
			upgrades.Load(), float64(upgrades.Load())/took.Seconds(), trimLog(err.Error()))
	}
	defer s.interrupt()
	t.Logf("the extension paired %v after serve started, beside %s upgrades", took.Round(time.Millisecond), strconv.FormatInt(upgrades.Load(), 10))
}

func trimLog(s string) string {
	if len(s) > 3000 {
		return s[:1500] + "\n...\n" + s[len(s)-1500:]
	}
	return s
}
