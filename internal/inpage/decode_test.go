package inpage

import (
	"errors"
	"testing"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/runtime"
)

// The one form of answer page, capture and upload read.
func TestDecode(t *testing.T) {
	val := func(s string) runtime.CallFunctionOnResult {
		return runtime.CallFunctionOnResult{Result: &runtime.RemoteObject{Value: jsonv2.Value(s)}}
	}
	var n int
	if err := Decode("f", val(`{"ok":7}`), &n); err != nil || n != 7 {
		t.Errorf("{ok:7}: %d, %v", n, err)
	}
	if err := Decode("f", val(`{"ok":7}`), nil); err != nil {
		t.Errorf("{ok} with no out: %v", err)
	}
	err := Decode("f", val(`{"err":"gone","msg":"the element is gone"}`), &n)
	var le *Error
	if !errors.As(err, &le) || le.Code != "gone" || err.Error() != "the element is gone" || errors.Unwrap(err) != nil {
		t.Errorf("{err}: %#v", err)
	}
	sentinel := errors.New("not found")
	k := &Kit{Codes: map[string]error{"gone": sentinel}}
	if err := k.Error(le.Code, le.Msg); !errors.Is(err, sentinel) {
		t.Errorf("a Kit's error does not unwrap to its sentinel: %v", err)
	}
	exc := runtime.CallFunctionOnResult{ExceptionDetails: &runtime.ExceptionDetails{Text: "Uncaught", Exception: &runtime.RemoteObject{Description: "TypeError: x is not a function"}}}
	var ex *Exception
	if err := Decode("f", exc, &n); !errors.As(err, &ex) || err.Error() != "TypeError: x is not a function" {
		t.Errorf("exception: %v", err)
	}
	if err := Decode("f", val(`{"ok":"seven"}`), &n); err == nil || errors.As(err, &le) {
		t.Errorf("a result of the wrong type: %v", err)
	}
	if err := Decode("f", runtime.CallFunctionOnResult{}, &n); err == nil {
		t.Error("no result at all decoded")
	}
}

func TestCallParams(t *testing.T) {
	args, err := Vals(1, "a", []int{2})
	if err != nil {
		t.Fatal(err)
	}
	p := CallParams("L", "G", "f", args...)
	if p.FunctionDeclaration != callJS || p.ObjectID != "L" || p.ObjectGroup != "G" || !*p.ReturnByValue || len(p.Arguments) != 4 ||
		string(p.Arguments[0].Value) != `"f"` || string(p.Arguments[3].Value) != `[2]` {
		t.Errorf("%+v", p)
	}
	if _, err := Vals(func() {}); err == nil {
		t.Error("a function encoded as an argument")
	}
}
