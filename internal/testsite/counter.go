package testsite

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// Counter is a local server that counts the requests for its pages, so a
// test can tell that nothing reached an address its policy forbids. It
// listens on a loopback address only.
type Counter struct {
	*httptest.Server
	Hits atomic.Int64
}

// NewCounter serves page on ip (a loopback address, e.g. 127.0.0.2);
// /r?to=URL redirects to URL. The favicon is not counted.
func NewCounter(t testing.TB, ip, page string) *Counter {
	t.Helper()
	if a := net.ParseIP(ip); a == nil || !a.IsLoopback() {
		t.Fatalf("testsite: a counter listens on loopback only, not %s", ip)
	}
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	c := &Counter{}
	c.Server = &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/favicon.ico" {
			http.NotFound(w, r)
			return
		}
		c.Hits.Add(1)
		if to := r.URL.Query().Get("to"); to != "" {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, page)
	})}}
	c.Start()
	t.Cleanup(c.Close)
	return c
}
