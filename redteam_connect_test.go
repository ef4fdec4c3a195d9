package livetab_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
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
