package extcdp_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/coder/websocket"

	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/internal/wire"
)

// stalling is a raw client of an endpoint of its own (opts) that attached
// to a tab the person opened and intercepts the tab's requests to paths
// with req in them, before its process stops.
type stalling struct {
	ws       *websocket.Conn
	srv      *httptest.Server
	tok      string
	tab, sid string
	req      string
}

func startStalling(t *testing.T, ctx context.Context, opts extcdp.HandlerOptions, name string) *stalling {
	t.Helper()
	opts.Token = "endpoint-token"
	s := &stalling{tok: opts.Token, req: name + "-req"}
	s.srv = httptest.NewServer(env.Relay.Handler(opts))
	t.Cleanup(s.srv.Close)
	s.tab = userTab(t, site.URL+"/form?"+name)
	closeUserTab(t, s.tab)
	time.Sleep(500 * time.Millisecond)
	var err error
	s.ws, _, err = websocket.Dial(ctx, s.url(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.ws.CloseNow() })
	s.ws.SetReadLimit(64 << 20)
	call := func(id int, msg string) jsonv2.Value {
		t.Helper()
		if err := s.ws.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		for {
			_, data, err := s.ws.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var m rawMsg
			jsonv2.Unmarshal(data, &m, wire.Options)
			if m.ID == int64(id) && m.Method == "" {
				if m.Error != nil {
					t.Fatalf("%s: %s", msg, m.Error.Message)
				}
				return m.Result
			}
		}
	}
	s.sid = field(call(1, fmt.Sprintf(`{"id":1,"method":"Target.attachToTarget","params":{"targetId":%q,"flatten":true}}`, s.tab)), "sessionId")
	call(2, fmt.Sprintf(`{"id":2,"sessionId":%q,"method":"Fetch.enable","params":{"patterns":[{"urlPattern":"*%s*"}]}}`, s.sid, s.req))
	return s
}

func (s *stalling) url() string {
	return env.Relay.BrowserURL(strings.TrimPrefix(s.srv.URL, "http://"), s.tok)
}

// personsRequest has the person's page fetch a path the stalled client
// intercepts, and fails t when it does not go through in bound.
func (s *stalling) personsRequest(t *testing.T, bound time.Duration, what string) {
	t.Helper()
	start := time.Now()
	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	pctx, pcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer pcancel()
	v, err := u.Eval(pctx, s.tab, `fetch('/form?`+s.req+`').then(r => r.status)`)
	took := time.Since(start).Round(time.Second)
	t.Logf("the person's request: %s %v after %v; relay clients %d", v, err, took, env.Relay.Status().Clients)
	if err != nil || string(v) != "200" || took > bound {
		t.Errorf("a request of the person's tab, intercepted by %s: %s %v after %v (the client still counted: %d clients)", what, v, err, took, env.Relay.Status().Clients)
	}
}

// TestRedTeamStalledClientHoldsPersonsTab: a client attaches to a tab
// the person opened and intercepts its requests (Fetch.enable), then its
// process stops (SIGSTOP, a debugger breakpoint, a hung event loop): its
// TCP connection stays open but it reads nothing more and answers no
// WebSocket ping. The person's tab must not wait on it for good: the
// endpoint cuts it after two missed pings (1 s apart here, 30 s by default),
// and the person's request goes through. Before, it waited past 50 s. A
// client that reads and sends nothing stays connected.
func TestRedTeamStalledClientHoldsPersonsTab(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := startStalling(t, ctx, extcdp.HandlerOptions{PingInterval: time.Second}, "stalled")
	// A client that reads and sends nothing, beside it.
	idle, _, err := websocket.Dial(ctx, s.url(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.CloseNow()
	replies := make(chan string, 1)
	go func() {
		for {
			_, data, err := idle.Read(context.Background())
			if err != nil {
				replies <- err.Error()
				return
			}
			replies <- string(data)
		}
	}()
	// From here the client's process is stopped: nothing reads its socket.
	s.personsRequest(t, 15*time.Second, "a client whose process stopped reading")
	if err := idle.Write(ctx, websocket.MessageText, []byte(`{"id":7,"method":"Browser.getVersion"}`)); err != nil {
		t.Fatalf("the idle client that reads was cut: %v", err)
	}
	select {
	case r := <-replies:
		if !strings.Contains(r, `"id":7`) {
			t.Errorf("the idle client that reads got %s, not its reply", r)
		}
	case <-time.After(5 * time.Second):
		t.Error("the idle client that reads got no reply")
	}
}

// TestRedTeamStalledClientAtMaxInFlight: as
// TestRedTeamStalledClientHoldsPersonsTab, but before its process stops
// the client has MaxInFlight commands on their way that the page never
// answers (Runtime.evaluate of a promise that never settles). The
// endpoint holds back reading it (the in-flight bound), and a ping
// unanswered while it holds back did not count: the client was never cut,
// and the person's intercepted request waited on it (for commandTimeout,
// 5 min). Now the excuse lasts two ping intervals.
func TestRedTeamStalledClientAtMaxInFlight(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := startStalling(t, ctx, extcdp.HandlerOptions{PingInterval: time.Second, MaxInFlight: 4}, "gate-stalled")
	for i := 0; i < 6; i++ {
		msg := fmt.Sprintf(`{"id":%d,"sessionId":%q,"method":"Runtime.evaluate","params":{"expression":"new Promise(() => {})","awaitPromise":true}}`, 100+i, s.sid)
		wctx, wcancel := context.WithTimeout(ctx, 2*time.Second)
		err := s.ws.Write(wctx, websocket.MessageText, []byte(msg))
		wcancel()
		if err != nil {
			t.Logf("write %d: %v", i, err)
			break
		}
	}
	// From here the client's process is stopped: nothing reads its socket.
	s.personsRequest(t, 15*time.Second, "a stopped client with MaxInFlight commands on their way")
}
