package extcdp_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamOpaquePopupSendsItselfAway: a client held to its domains
// (Livetab.setPolicy {domains}, no blockPrivate: 127.0.0.2 stands for
// another site) drives a page of an allowed host, which opens a popup of
// that host. The popup makes its own origin opaque (a CSP sandbox header,
// or a sandboxed frame of its own that may navigate the top) and then
// sends itself outside the domains. The rules of new tabs hold the loads
// pages of the domains start (initiatorDomains), and an opaque initiator
// is none of them: the request went out (red team, 4 of 4). The popup's
// later loads no page of the domains started are now held as in the tabs
// the client opened. The control runs the same pages with no policy.
func TestRedTeamOpaquePopupSendsItselfAway(t *testing.T) {
	srv, tok := endpoint(t)
	outside := newOpaqueCounter(t, "127.0.0.2", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<title>outside</title>secret of 127.0.0.2")
	})
	O := outside.URL
	site := newOpaqueCounter(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		way := strings.TrimPrefix(r.URL.Path, "/pop/")
		switch {
		case !strings.HasPrefix(r.URL.Path, "/pop/"):
			fmt.Fprintf(w, `<!doctype html><title>shop</title><script>function go() { window.open('/pop%s') }</script>`, r.URL.Path)
		case way == "csp-later":
			w.Header().Set("Content-Security-Policy", "sandbox allow-scripts allow-top-navigation")
			fmt.Fprintf(w, `<!doctype html><title>pop</title><script>setTimeout(() => { location.href = '%s/%s' }, 300)</script>`, O, way)
		case way == "csp-at-once":
			w.Header().Set("Content-Security-Policy", "sandbox allow-scripts allow-top-navigation")
			fmt.Fprintf(w, `<!doctype html><title>pop</title><script>location.href = '%s/%s'</script>`, O, way)
		case way == "frame-top":
			fmt.Fprintf(w, `<!doctype html><title>pop</title><iframe sandbox="allow-scripts allow-top-navigation" srcdoc="<script>setTimeout(() => { top.location = '%s/%s' }, 300)</script>"></iframe>`, O, way)
		}
	})
	for _, held := range []bool{false, true} {
		for _, way := range []string{"csp-later", "csp-at-once", "frame-top"} {
			a := dialRawTo(t, srv, tok)
			if held {
				a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}})
			}
			tid, sid := a.open(site.URL + "/" + way)
			a.eval(sid, `document.readyState === 'complete' || new Promise(r => onload = r)`)
			a.eval(sid, `go(), true`)
			for end := time.Now().Add(3 * time.Second); time.Now().Before(end) && outside.count("/"+way) == 0; {
				time.Sleep(50 * time.Millisecond)
			}
			time.Sleep(300 * time.Millisecond)
			n := outside.count("/" + way)
			t.Logf("held=%v %s: the outside server saw %d", held, way, n)
			if !held && n == 0 {
				t.Errorf("control %s: the popup never reached the outside server: the vector does not work", way)
			}
			if held && n > 0 {
				t.Errorf("%s: a popup of the client's page sent itself to %s/%s (%d requests)", way, O, way, n)
			}
			a.call("", "Target.closeTarget", map[string]any{"targetId": tid})
			a.ws.CloseNow()
			outside.reset()
			time.Sleep(300 * time.Millisecond)
		}
	}
}

// opaqueCounter is a loopback server that counts the requests of each path.
type opaqueCounter struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func newOpaqueCounter(t *testing.T, ip string, page http.HandlerFunc) *opaqueCounter {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	c := &opaqueCounter{hits: map[string]int{}}
	c.Server = &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/favicon.ico" {
			http.NotFound(w, r)
			return
		}
		c.mu.Lock()
		c.hits[r.URL.Path]++
		c.mu.Unlock()
		page(w, r)
	})}}
	c.Start()
	t.Cleanup(c.Close)
	return c
}

func (c *opaqueCounter) count(prefix string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for p, k := range c.hits {
		if strings.HasPrefix(p, prefix) {
			n += k
		}
	}
	return n
}

func (c *opaqueCounter) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hits = map[string]int{}
}
