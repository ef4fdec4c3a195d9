package livetabcdp_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/livetabcdp"
)

func TestIsUnsupported(t *testing.T) {
	// What Chromium 156 answers for a method it does not know, as chromedp
	// returns it (see TestUnsupportedOnPlainChromium in package extcdp).
	plain := &cdproto.Error{Code: -32601, Message: "'Livetab.getInfo' wasn't found"}
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"plain", plain, true},
		{"wrapped", fmt.Errorf("upload: asking the extension: %w", plain), true},
		{"wrapped twice", fmt.Errorf("a: %w", fmt.Errorf("b: %w", plain)), true},
		{"joined", errors.Join(context.Canceled, plain), true},
		{"nil", nil, false},
		{"invalid params", &cdproto.Error{Code: -32602, Message: "Invalid parameters"}, false},
		{"server error", &cdproto.Error{Code: -32000, Message: "livetab: no active tab"}, false},
		// The words alone are not the answer: a message from elsewhere
		// (a page's text, a flattened error) may carry them.
		{"only the text", errors.New("'Livetab.getInfo' wasn't found (-32601)"), false},
		{"other error", context.DeadlineExceeded, false},
	} {
		if got := livetabcdp.IsUnsupported(c.err); got != c.want {
			t.Errorf("%s: IsUnsupported(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}

// The wire form of each command is the one the relay reads and answers
// (extcdp's tests run them against the real extension).
func TestWireForm(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{livetabcdp.CloseTabParams{TargetID: "T1"}, `{"targetId":"T1"}`},
		{livetabcdp.SetPolicyParams{SharedOnly: true}, `{"sharedOnly":true,"domains":[]}`},
		{livetabcdp.SetPolicyParams{Domains: []string{"*.example.com"}, BlockPrivate: true, PrivateAllowed: []string{"127.0.0.1"}},
			`{"sharedOnly":false,"domains":["*.example.com"],"blockPrivate":true,"privateAllowed":["127.0.0.1"]}`},
		{cdp.Empty{}, `{}`},
	} {
		b, err := jsonv2.Marshal(c.v)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("%T: %s, want %s", c.v, b, c.want)
		}
	}
	for m, want := range map[string]string{
		livetabcdp.GetInfo.Method:      "Livetab.getInfo",
		livetabcdp.GetActiveTab.Method: "Livetab.getActiveTab",
		livetabcdp.GetTabs.Method:      "Livetab.getTabs",
		livetabcdp.CloseTab.Method:     "Livetab.closeTab",
		livetabcdp.SetPolicy.Method:    "Livetab.setPolicy",
	} {
		if m != want {
			t.Errorf("method %s, want %s", m, want)
		}
	}
}
