package extcdp_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// Whatever a program on the machine sends, it gets the answer Chrome would
// give, with its id when it has one, and the endpoint goes on.
func TestEndpointAnswersMalformedMessages(t *testing.T) {
	srv, tok := endpoint(t)
	host := strings.TrimPrefix(srv.URL, "http://")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, env.Relay.BrowserURL(host, tok), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	for _, tc := range []struct {
		typ  websocket.MessageType
		send string
		want []string // substrings of the one reply
	}{
		{websocket.MessageText, `{"id":0,"method":"Browser.getVersion"}`, []string{`"id":0,`, `"result":{`}},
		{websocket.MessageText, `{"method":"Browser.getVersion"}`, []string{`"error":{"code":-32600`, "integer id"}},
		{websocket.MessageText, `{"id":-4,"method":"Browser.getVersion"}`, []string{`"id":-4,`, `"result":{`}},
		{websocket.MessageText, `{"id":"seven","method":"Browser.getVersion"}`, []string{`"code":-32700`}},
		{websocket.MessageText, `{"id":5}`, []string{`"id":5,`, `"code":-32600`, "needs a method"}},
		{websocket.MessageText, `{"id":6,"method":"Target.getTargets","params":[1]}`, []string{`"id":6,`, `"code":-32602`}},
		{websocket.MessageText, `{"id":7,"method":"Target.getTargets","result":{}}`, []string{`"id":7,`, `"code":-32602`}},
		{websocket.MessageText, `not json`, []string{`"code":-32700`}},
		{websocket.MessageBinary, `{"id":8,"method":"Browser.getVersion"}`, []string{`"code":-32700`, "binary"}},
		{websocket.MessageText, `{"id":9,"method":"Browser.getVersion","params":null}`, []string{`"id":9,`, `"result":{`}},
		// The id reads but another field has the wrong type: the answer
		// still carries the id the client waits on.
		{websocket.MessageText, `{"id":10,"sessionId":1,"method":"Runtime.evaluate"}`, []string{`"id":10,`, `"code":-32600`}},
		{websocket.MessageText, `{"id":11,"method":["Browser.getVersion"]}`, []string{`"id":11,`, `"code":-32600`}},
		{websocket.MessageText, `{"id":0,"method":7}`, []string{`"id":0,`, `"code":-32600`}},
		// A name given twice, which Chrome reads: refused, under the id.
		{websocket.MessageText, `{"id":12,"method":"Runtime.evaluate","method":"Browser.getVersion"}`, []string{`"id":12,`, `"code":-32600`}},
	} {
		if err := ws.Write(ctx, tc.typ, []byte(tc.send)); err != nil {
			t.Fatal(err)
		}
		_, data, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("%s: %v", tc.send, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(string(data), w) {
				t.Errorf("%s: got %s, want %s in it", tc.send, data, w)
			}
		}
	}

	get := func(path, hostHeader string) (int, string) {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Host = hostHeader
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/devtools/browser/NOT-THE-BROWSER?token="+tok, host); code != http.StatusNotFound {
		t.Errorf("a WebSocket path with another id: %d, want 404", code)
	}
	_, port, _ := strings.Cut(host, ":")
	for _, h := range []string{"localhost:" + port, "[::1]:" + port} {
		code, body := get("/json/version?token="+tok, h)
		if code != http.StatusOK || !strings.Contains(body, `"webSocketDebuggerUrl":"ws://`+host+`/devtools/browser/`) {
			t.Errorf("/json/version asked as %s: %d %s, want the address the endpoint listens on (%s)", h, code, body, host)
		}
	}
}
