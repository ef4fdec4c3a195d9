package extcdp_test

import (
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// A hostile page of a.localhost (the agent's domain) wedges its tab with a
// srcdoc frame nested in a frame of b.localhost (outside the domains), or
// its own, whose hash names an address outside the domains. The relay's
// rewrite of Chrome's refusal (frameURLRefused) must name nothing that
// Chrome's own words did not already (the rewrite no longer repeats them).
func TestRedTeamWedgeMessageNamesNothingNew(t *testing.T) {
	srv := loopbackServer(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, port, _ := net.SplitHostPort(r.Host)
		switch {
		case host == "a.localhost" && r.URL.Query().Get("nested") == "1":
			fmt.Fprintf(w, `<!doctype html><title>wedge</title><iframe src="http://b.localhost:%s/inner"></iframe>`, port)
		case host == "a.localhost":
			fmt.Fprint(w, `<!doctype html><title>wedge</title><iframe srcdoc="<p>inner</p>"></iframe>
<script>onload = () => { document.querySelector('iframe').contentWindow.location.hash = 'http://c.localhost/SECRETPATH?tok=1' }</script>`)
		default:
			fmt.Fprint(w, `<!doctype html><title>INNERTITLE</title><iframe srcdoc="<p>inner</p>"></iframe>
<script>onload = () => { document.querySelector('iframe').contentWindow.location.hash = 'x-b-inner' }</script>`)
		}
	}))
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	urlish := regexp.MustCompile(`(?:[a-z-]+://|about:|data:|blob:)[^\s"'()…]*|[a-z0-9.-]+\.localhost[^\s"'()…]*`)
	for _, tc := range []struct{ name, q string }{{"own-srcdoc-hash-names-url", ""}, {"nested-in-outside-frame", "?nested=1"}} {
		t.Run(tc.name, func(t *testing.T) {
			b := dialRaw(t)
			b.must("", "Livetab.setPolicy", map[string]any{"domains": []string{"a.localhost"}})
			tid, sid := b.open("http://a.localhost:" + port + "/" + tc.q)
			t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": tid}) })
			var errs []error
			deadline := time.Now().Add(10 * time.Second)
			for time.Now().Before(deadline) {
				if _, err := b.call(sid, "Runtime.evaluate", map[string]any{"expression": "1+1", "returnByValue": true}); err != nil {
					errs = append(errs, err)
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if _, err := b.call("", "Target.attachToTarget", map[string]any{"targetId": tid, "flatten": true}); err != nil {
				errs = append(errs, err)
			}
			if len(errs) == 0 {
				t.Logf("never wedged (not a break)")
				return
			}
			for _, err := range errs {
				msg := err.Error()
				t.Logf("refusal: %s", msg)
				i := strings.LastIndex(msg, "(Cannot access")
				if i < 0 {
					t.Logf("no Chrome words kept: nothing to compare")
					continue
				}
				chrome := msg[i:]
				for _, u := range urlish.FindAllString(msg[:i], -1) {
					if !strings.Contains(chrome, u) {
						t.Errorf("the relay's words name %q, which Chrome's own did not: %s", u, msg)
					}
				}
				for _, s := range []string{"INNERTITLE", "b.localhost", "/inner"} {
					if strings.Contains(msg, s) && !strings.Contains(chrome, s) {
						t.Errorf("names %q of the frame outside the domains: %s", s, msg)
					}
				}
			}
		})
	}
}
