package extcdp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/coder/websocket"
)

// A session id the endpoint echoes back is written as JSON, whatever a
// client put in it: a strict parser reads the reply, and gets the id back
// (invalid UTF-8 replaced).
func TestEndpointEchoesOddSessionIDsAsJSON(t *testing.T) {
	srv, tok := endpoint(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, env.Relay.BrowserURL(strings.TrimPrefix(srv.URL, "http://"), tok), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	for _, tc := range []struct {
		sent string // raw bytes inside the JSON string of the command
		want string // the session id as the strict parser reads it back
	}{
		{`\u007f`, "\x7f"},
		{`\u0007bell`, "\abell"},
		{`\u2028\u2029`, "\u2028\u2029"},
		{`\udb40\udc01`, "\U000E0001"},
		{`\u00ad`, "\u00ad"},
		{"\xff\xfe", "\ufffd\ufffd"},
		{`quote\"back\\slash`, `quote"back\slash`},
		{"plain-ASCII-0123", "plain-ASCII-0123"},
	} {
		cmd := `{"id":1,"sessionId":"` + tc.sent + `","method":"Runtime.evaluate","params":{"expression":"1"}}`
		if err := ws.Write(ctx, websocket.MessageText, []byte(cmd)); err != nil {
			t.Fatal(err)
		}
		_, data, err := ws.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var reply struct {
			ID        int64  `json:"id"`
			SessionID string `json:"sessionId"`
			Error     *struct {
				Code int64 `json:"code"`
			} `json:"error"`
		}
		// No options: the standard's strict defaults, invalid UTF-8 refused.
		if err := jsonv2.Unmarshal(data, &reply); err != nil {
			t.Errorf("session id %q: the reply %q is not JSON: %v", tc.sent, data, err)
			continue
		}
		if reply.ID != 1 || reply.SessionID != tc.want || reply.Error == nil || reply.Error.Code != -32001 {
			t.Errorf("session id %q: reply %q, want id 1, session id %q and error -32001", tc.sent, data, tc.want)
		}
	}
}
