package extcdp_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A hostile page makes its whole tab undebuggable: it sets the hash of its
// srcdoc frame, whose URL becomes about:srcdoc#x, and chrome.debugger
// checks every frame's URL before each command of the tab. Every command of
// every client then failed with Chrome's "Extension manifest must request
// permission to access this host" (red team, 5 of 9 ways, every run). No
// command can undo it; the client must learn what happened and what it
// can still do, and the tab must answer again once the frame is gone.
func TestRedTeamPageWedgesItsTabByAFrameURL(t *testing.T) {
	srv := loopbackServer(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>wedge</title><iframe srcdoc="<p>inner</p>"></iframe>
<script>
onload = () => {
  document.querySelector('iframe').contentWindow.location.hash = 'x';
  if (location.hash === '#heal') setTimeout(() => document.querySelector('iframe').remove(), 1500);
};
</script>`)
	}))
	t.Run("clear-error-and-close", func(t *testing.T) {
		b := dialRaw(t)
		tid, sid := b.open(srv.URL + "/")
		var err error
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if _, err = b.call(sid, "Runtime.evaluate", map[string]any{"expression": "1+1", "returnByValue": true}); err != nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err == nil {
			t.Fatal("the page's srcdoc frame with a hash did not make Chrome refuse the tab's commands: the attack changed")
		}
		for _, want := range []string{"about:srcdoc#x", "frame", "Target.closeTarget", "reload"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the refusal does not say %q: %v", want, err)
			}
		}
		if strings.HasPrefix(err.Error(), "Runtime.evaluate: -32000 Cannot access") {
			t.Errorf("the refusal is Chrome's words about the manifest, not what happened: %v", err)
		}
		// A second session gets the same clear words.
		if _, err := b.call("", "Target.attachToTarget", map[string]any{"targetId": tid, "flatten": true}); err == nil {
			t.Log("a second attach was answered")
		} else if !strings.Contains(err.Error(), "about:srcdoc#x") || !strings.Contains(err.Error(), "frame") {
			t.Errorf("a second attach fails without saying why: %v", err)
		}
		// What still works: closing the program's own tab.
		if _, err := b.call("", "Target.closeTarget", map[string]any{"targetId": tid}); err != nil {
			t.Fatalf("Target.closeTarget of the program's wedged tab: %v", err)
		}
	})
	t.Run("answers-once-the-frame-is-gone", func(t *testing.T) {
		b := dialRaw(t)
		tid, sid := b.open(srv.URL + "/#heal")
		t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": tid}) })
		wedged := false
		deadline := time.Now().Add(15 * time.Second)
		for time.Now().Before(deadline) {
			_, err := b.call(sid, "Runtime.evaluate", map[string]any{"expression": "document.querySelectorAll('iframe').length", "returnByValue": true})
			if err != nil {
				wedged = true
			} else if wedged {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("wedged %v: the tab did not answer again after the page removed the frame", wedged)
	})
}
