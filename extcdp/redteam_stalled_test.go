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

// TestRedTeamStalledClientHoldsPersonsTab: a client attaches to a tab
// the person opened and intercepts its requests (Fetch.enable), then its
// process stops (SIGSTOP, a debugger breakpoint, a hung event loop): its
// TCP connection stays open but it reads nothing more and answers no
// WebSocket ping. The person's tab must not wait on it for good: the
// endpoint cuts it after two ping intervals (1 s here, 30 s by default),
// and the person's request goes through. Before, it waited past 50 s. A
// client that reads and sends nothing stays connected.
func TestRedTeamStalledClientHoldsPersonsTab(t *testing.T) {
	tok := "endpoint-token"
	srv := httptest.NewServer(env.Relay.Handler(extcdp.HandlerOptions{Token: tok, PingInterval: time.Second}))
	t.Cleanup(srv.Close)
	id := userTab(t, site.URL+"/form?zzf-stalled")
	closeUserTab(t, id)
	time.Sleep(500 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, env.Relay.BrowserURL(strings.TrimPrefix(srv.URL, "http://"), tok), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	ws.SetReadLimit(64 << 20)
	call := func(id int, msg string) jsonv2.Value {
		t.Helper()
		if err := ws.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		for {
			_, data, err := ws.Read(ctx)
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
	sid := field(call(1, fmt.Sprintf(`{"id":1,"method":"Target.attachToTarget","params":{"targetId":%q,"flatten":true}}`, id)), "sessionId")
	call(2, fmt.Sprintf(`{"id":2,"sessionId":%q,"method":"Fetch.enable","params":{"patterns":[{"urlPattern":"*zzf-stalled-req*"}]}}`, sid))
	// A client that reads and sends nothing, beside it.
	idle, _, err := websocket.Dial(ctx, env.Relay.BrowserURL(strings.TrimPrefix(srv.URL, "http://"), tok), nil)
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
	start := time.Now()
	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	pctx, pcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer pcancel()
	v, err := u.Eval(pctx, id, `fetch('/form?zzf-stalled-req').then(r => r.status)`)
	took := time.Since(start).Round(time.Second)
	t.Logf("the person's request: %s %v after %v; relay clients %d", v, err, took, env.Relay.Status().Clients)
	if err != nil || string(v) != "200" || took > 15*time.Second {
		t.Errorf("a request of the person's tab, intercepted by a client whose process stopped reading: %s %v after %v (the client still counted: %d clients)", v, err, took, env.Relay.Status().Clients)
	}
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
