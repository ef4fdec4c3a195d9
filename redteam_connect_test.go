package livetab_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/livetab/livetab"
	"github.com/livetab/livetab/bridge"
)

// TestConnectSquatterGetsNoToken: `livetab serve` died without removing its
// endpoint file, and another local program took its port. The endpoint
// token is derived from the pairing token, so it is the same for the next
// serve: whoever hears it once may drive the browser from then on.
// Connect (and every Probe) must not send it to a program that cannot
// prove it holds it, whatever that program answers.
func TestConnectSquatterGetsNoToken(t *testing.T) {
	tok := bridge.EndpointToken(bridge.NewToken())
	var mu sync.Mutex
	var heard []string
	squatter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		heard = append(heard, r.URL.String()+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		// It answers as a serve would, to be believed.
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"proof":"00","connected":true}`))
	}))
	defer squatter.Close()
	host := strings.TrimPrefix(squatter.URL, "http://")
	o := connectOpts(t)
	o.Ways = []livetab.Way{livetab.WayServe}
	if err := livetab.WriteEndpoint(o.EndpointFile, livetab.Endpoint{URL: "ws://" + host + "/devtools/browser/x?token=" + tok, HTTP: squatter.URL, PID: 42}); err != nil {
		t.Fatal(err)
	}
	_, cancel, err := livetab.Connect(context.Background(), o)
	if err == nil {
		cancel()
		t.Error("Connect chose a squatter on a gone serve's port")
	} else if !errors.Is(err, livetab.ErrNotServe) {
		t.Errorf("Connect: %v, want ErrNotServe", err)
	}
	e, _ := livetab.ReadEndpoint(o.EndpointFile)
	if _, err := livetab.Probe(context.Background(), e); !errors.Is(err, livetab.ErrNotServe) {
		t.Errorf("Probe: %v, want ErrNotServe", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, h := range heard {
		if strings.Contains(h, tok) {
			t.Errorf("the squatter heard the endpoint token: %s", h)
		}
	}
	if len(heard) == 0 {
		t.Error("the squatter was never asked: the test proves nothing")
	}
}

// TestNativeSquatterGetsNothing: Chrome crashed (or was closed without
// cleaning up) and left DevToolsActivePort behind; another local program
// took the port it names. A program that finds the browser through that
// file would send it every command, the pages it opens and the text it
// types, to that program. The native way must check that the port is the
// browser's of that profile before it connects, and the squatter must hear
// nothing, not even a connection.
func TestNativeSquatterGetsNothing(t *testing.T) {
	var mu sync.Mutex
	accepted := 0
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			accepted++
			mu.Unlock()
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port

	// A live process that is not the listener stands for a recycled pid.
	other := exec.Command("sleep", "60")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { other.Process.Kill(); other.Wait() }()
	host, _ := os.Hostname()

	for _, tc := range []struct{ name, lock string }{
		{"no lock", ""},
		{"dead pid", host + "-999999999"},
		{"another process", host + "-" + strconv.Itoa(other.Process.Pid)},
		{"another host", "elsewhere.example-" + strconv.Itoa(os.Getpid())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := connectOpts(t)
			o.Ways = []livetab.Way{livetab.WayNative}
			if err := os.WriteFile(filepath.Join(o.ProfileDir, livetab.ActivePortFile), fmt.Appendf(nil, "%d\n/devtools/browser/0a1b2c\n", port), 0o600); err != nil {
				t.Fatal(err)
			}
			if tc.lock != "" {
				if err := os.Symlink(tc.lock, filepath.Join(o.ProfileDir, "SingletonLock")); err != nil {
					t.Fatal(err)
				}
			}
			if u, err := livetab.NativeURL(o.ProfileDir); err == nil {
				t.Errorf("NativeURL = %s for a port the profile's Chrome does not hold", u)
			} else if !errors.Is(err, livetab.ErrNoNativeChrome) || !strings.Contains(err.Error(), strconv.Itoa(port)) {
				t.Errorf("NativeURL: %v; want ErrNoNativeChrome naming the port", err)
			}
			if _, cancel, err := livetab.ConnectNative(context.Background(), o.ProfileDir); err == nil {
				cancel()
				t.Error("ConnectNative chose a squatter")
			}
			if _, cancel, err := livetab.Connect(context.Background(), o); err == nil {
				cancel()
				t.Error("Connect chose a squatter")
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if accepted != 0 {
		t.Errorf("the squatter accepted %d connections", accepted)
	}
}
