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

// TestRedTeamStalledClientAtMaxInFlight: as
// TestRedTeamStalledClientHoldsPersonsTab, but before its process stops
// the client has MaxInFlight commands on their way that the page never
// answers (Runtime.evaluate of a promise that never settles). The
// endpoint holds back reading it (the in-flight bound), and a ping
// unanswered while it holds back did not count: the client was never cut,
// and the person's intercepted request waited on it (for commandTimeout,
// 5 min). Now the excuse lasts two ping intervals.
func TestRedTeamStalledClientAtMaxInFlight(t *testing.T) {
	tok := "endpoint-token"
	srv := httptest.NewServer(env.Relay.Handler(extcdp.HandlerOptions{Token: tok, PingInterval: time.Second, MaxInFlight: 4}))
	t.Cleanup(srv.Close)
	id := userTab(t, site.URL+"/form?gate-stalled")
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
	call(2, fmt.Sprintf(`{"id":2,"sessionId":%q,"method":"Fetch.enable","params":{"patterns":[{"urlPattern":"*gate-stalled-req*"}]}}`, sid))
	for i := 0; i < 6; i++ {
		msg := fmt.Sprintf(`{"id":%d,"sessionId":%q,"method":"Runtime.evaluate","params":{"expression":"new Promise(() => {})","awaitPromise":true}}`, 100+i, sid)
		wctx, wcancel := context.WithTimeout(ctx, 2*time.Second)
		err := ws.Write(wctx, websocket.MessageText, []byte(msg))
		wcancel()
		if err != nil {
			t.Logf("write %d: %v", i, err)
			break
		}
	}
	// From here the client's process is stopped: nothing reads its socket.
	start := time.Now()
	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	pctx, pcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer pcancel()
	v, err := u.Eval(pctx, id, `fetch('/form?gate-stalled-req').then(r => r.status)`)
	took := time.Since(start).Round(time.Second)
	t.Logf("the person's request: %s %v after %v; relay clients %d", v, err, took, env.Relay.Status().Clients)
	if err != nil || string(v) != "200" || took > 15*time.Second {
		t.Errorf("a request of the person's tab, intercepted by a stopped client with MaxInFlight commands on their way: %s %v after %v (the client still counted: %d clients)", v, err, took, env.Relay.Status().Clients)
	}
}
