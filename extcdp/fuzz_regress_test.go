package extcdp

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"

	"github.com/livetab/livetab/internal/wire"
)

// Found by FuzzClientHandle: a client that attached to the browser target
// (Target.attachToBrowserTarget, a session without a tab) panicked in
// Close while holding the relay's lock, which froze every other client
// and the extension's events.
func TestCloseAfterBrowserSession(t *testing.T) {
	env := getFuzzEnv(t)
	c := env.r.NewClient()
	c.Handle(&cdproto.Message{ID: 1, Method: cdproto.CommandTargetAttachToBrowserTarget})
	ctx, cancel := context.WithTimeout(context.Background(), fuzzBound)
	defer cancel()
	if m, err := c.Next(ctx); err != nil || m.Error != nil {
		t.Fatalf("attachToBrowserTarget: %+v %v", m, err)
	}
	c.Close()

	other := env.r.NewClient()
	defer other.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		other.Handle(&cdproto.Message{ID: 2, Method: cdproto.CommandTargetGetTargets})
	}()
	select {
	case <-done:
	case <-time.After(fuzzBound):
		t.Fatal("the relay is stuck after a client with a browser session closed")
	}
	if m, err := other.Next(ctx); err != nil || m.ID != 2 || m.Error != nil {
		t.Fatalf("another client after the close: %+v %v", m, err)
	}
}

// Found by FuzzClientHandle: the endpoint wrote session ids and methods
// with strconv.Quote, which is not JSON for control characters, invalid
// UTF-8 or some non-ASCII runes; a client sending such a session id got
// back a message its JSON parser rejects.
func TestAppendMessageIsJSON(t *testing.T) {
	for _, s := range []string{"\x00\x1f\"\\", "\xff\xfe", "\U0001F600 \u2028 \x7f", "plain-ASCII \"quoted\" \\ ok", ""} {
		for _, m := range []*cdproto.Message{
			{ID: 1, SessionID: target.SessionID(s), Error: &cdproto.Error{Code: -32001, Message: s}},
			{SessionID: target.SessionID(s), Method: cdproto.MethodType(s), Params: jsonv2.Value(`{}`)},
			{ID: 2, SessionID: target.SessionID(s)},
		} {
			b, err := appendMessage(nil, m)
			if err != nil {
				t.Fatal(err)
			}
			var v map[string]any
			if err := jsonv2.Unmarshal(b, &v, wire.Options); err != nil {
				t.Errorf("%q: %v", b, err)
			}
			if s == "plain-ASCII \"quoted\" \\ ok" && (v["sessionId"] != s) {
				t.Errorf("%q: sessionId %q, want %q", b, v["sessionId"], s)
			}
		}
	}
}
