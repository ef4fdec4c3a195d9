package extcdp_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamResourceContentOfASubresourceOutside: the relay refuses
// Network.getResponseBody (and Fetch's) for a request outside a held
// client's domains. Page.getResourceContent and Page.searchInResource
// read the same bodies by URL, from the allowed frame's resources: a
// script and a style sheet its page loads from 127.0.0.2. So do
// CSS.getStyleSheetText (a style sheet of another origin, whose rules the
// page itself may not read) and Debugger.getScriptSource.
func TestRedTeamResourceContentOfASubresourceOutside(t *testing.T) {
	srv, tok := endpoint(t)
	bank := serveAt(t, "127.0.0.2", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/s.js":
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprint(w, "var zzq = 'zzq-js-secret';")
		case "/s.css":
			w.Header().Set("Content-Type", "text/css")
			fmt.Fprint(w, "/* zzq-css-secret */ body { color: black }")
		}
	})
	allowed := serveAt(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<title>agent</title><link rel=stylesheet href="%s/s.css"><script src="%s/s.js"></script>agent`, bank.URL, bank.URL)
	})
	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}})
	target, sid := a.open(allowed.URL + "/page")
	a.eval(sid, `document.readyState === 'complete' || new Promise(r => onload = r)`)
	time.Sleep(300 * time.Millisecond)
	a.must(sid, "Page.enable", map[string]any{})
	a.must(sid, "DOM.enable", map[string]any{})
	a.must(sid, "CSS.enable", map[string]any{})
	a.must(sid, "Debugger.enable", map[string]any{})
	time.Sleep(500 * time.Millisecond)
	a.mu.Lock()
	var sheets, scripts []string
	for _, e := range a.events {
		var p struct {
			Header struct {
				ID        string `json:"styleSheetId"`
				SourceURL string `json:"sourceURL"`
			} `json:"header"`
			ScriptID string `json:"scriptId"`
			URL      string `json:"url"`
		}
		unmarshal(e.Params, &p)
		if e.Method == "CSS.styleSheetAdded" && strings.HasPrefix(p.Header.SourceURL, bank.URL) {
			sheets = append(sheets, p.Header.ID)
		}
		if e.Method == "Debugger.scriptParsed" && strings.HasPrefix(p.URL, bank.URL) {
			scripts = append(scripts, p.ScriptID)
		}
	}
	a.mu.Unlock()
	for _, id := range sheets {
		res, err := a.call(sid, "CSS.getStyleSheetText", map[string]any{"styleSheetId": id})
		t.Logf("CSS.getStyleSheetText: %.200s %v", res, err)
		if strings.Contains(string(res), "zzq-") {
			t.Errorf("CSS.getStyleSheetText read the style sheet of 127.0.0.2: %.200s", res)
		}
	}
	for _, id := range scripts {
		res, err := a.call(sid, "Debugger.getScriptSource", map[string]any{"scriptId": id})
		t.Logf("Debugger.getScriptSource: %.200s %v", res, err)
		if strings.Contains(string(res), "zzq-") {
			t.Errorf("Debugger.getScriptSource read the script of 127.0.0.2: %.200s", res)
		}
	}
	tree := a.must(sid, "Page.getResourceTree", map[string]any{})
	t.Logf("resource tree: %.600s", tree)
	frame := target
	for _, u := range []string{bank.URL + "/s.js", bank.URL + "/s.css"} {
		res, err := a.call(sid, "Page.getResourceContent", map[string]any{"frameId": frame, "url": u})
		t.Logf("Page.getResourceContent %s: %.200s %v", u, res, err)
		if strings.Contains(string(res), "zzq-") {
			t.Errorf("Page.getResourceContent read the body of %s, outside the client's domains: %.200s", u, res)
		}
		res, err = a.call(sid, "Page.searchInResource", map[string]any{"frameId": frame, "url": u, "query": "zzq-"})
		t.Logf("Page.searchInResource %s: %.300s %v", u, res, err)
		if strings.Contains(string(res), "secret") {
			t.Errorf("Page.searchInResource read the body of %s, outside the client's domains: %.300s", u, res)
		}
	}
}
