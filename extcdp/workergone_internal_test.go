package extcdp

import (
	"strings"
	"testing"

	"github.com/chromedp/cdproto"
)

// Chrome's bare "No SW" reaches a client as what happened and what to do;
// any other error as Chrome gave it.
func TestWorkerGoneSaysWhatToDo(t *testing.T) {
	got := workerGone(&cdproto.Error{Code: -32000, Message: "No SW"})
	if got.Code != -32000 || !strings.Contains(got.Message, "service worker stopped") || !strings.Contains(got.Message, "send the command again") {
		t.Errorf("No SW: %+v", got)
	}
	other := &cdproto.Error{Code: -32602, Message: "Invalid stream handle"}
	if got := workerGone(other); got != other {
		t.Errorf("another error changed: %+v", got)
	}
}
