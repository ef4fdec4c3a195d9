package extcdp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/livetab/livetab/extcdp"
)

// Whatever id a program picks, its answer comes back under that id, once
// per command, or as Chrome's error for a message with no usable id: no
// client waits for an answer that went out under another id.
func TestRedTeamIDsComeBackAsSent(t *testing.T) {
	url, _, _ := fakeEndpoint(t, extcdp.HandlerOptions{}, tabsFake)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	for _, tc := range []struct {
		send string
		want []string // each in the one answer, in order of the answers
	}{
		// The relay's own stand-in for id 0: its answer went out as id 0's.
		{`{"id":-9223372036854775808,"method":"Browser.getVersion"}`, []string{`{"error":{"code":-32600`, "out of range"}},
		{`{"id":9223372036854775807,"method":"Browser.getVersion"}`, []string{`"id":9223372036854775807,`, `"result":{`}},
		{`{"id":-1,"method":"Browser.getVersion"}`, []string{`"id":-1,`, `"result":{`}},
		{`{"id":9007199254740993,"method":"Browser.getVersion"}`, []string{`"id":9007199254740993,`, `"result":{`}},
		// Past int64: no id to answer under, as Chrome for a non-integer id.
		{`{"id":9223372036854775808,"method":"Browser.getVersion"}`, []string{`"code":-32700`}},
		{`{"id":1e3,"method":"Browser.getVersion"}`, []string{`"code":-32700`}},
	} {
		if err := ws.Write(ctx, websocket.MessageText, []byte(tc.send)); err != nil {
			t.Fatal(err)
		}
		_, data, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("%s: no answer: %v", tc.send, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(string(data), w) {
				t.Errorf("%s: got %s, want %s in it", tc.send, data, w)
			}
		}
	}
	// The same id twice in flight, and again once answered: an answer for
	// each, under that id.
	for range 2 {
		for range 2 {
			if err := ws.Write(ctx, websocket.MessageText, []byte(`{"id":7,"method":"Target.getTargets"}`)); err != nil {
				t.Fatal(err)
			}
		}
		for range 2 {
			_, data, err := ws.Read(ctx)
			if err != nil {
				t.Fatalf("a second command under id 7: %v", err)
			}
			if !strings.HasPrefix(string(data), `{"id":7,`) || !strings.Contains(string(data), `"result":{"targetInfos"`) {
				t.Errorf("id 7 twice: got %s", data)
			}
		}
	}
}
