package extcdp_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
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
		if r.URL.Path == "/ext" {
			// A frame of another extension's page (here of none): Chrome
			// refuses the tab in other words.
			fmt.Fprint(w, `<!doctype html><title>wedge</title><iframe src="chrome-extension://invalid/"></iframe>`)
			return
		}
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
		for _, want := range []string{"about:srcdoc", "frame", "Target.closeTarget", "reload"} {
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
		} else if !strings.Contains(err.Error(), "about:srcdoc") || !strings.Contains(err.Error(), "frame") {
			t.Errorf("a second attach fails without saying why: %v", err)
		}
		// What still works: closing the program's own tab.
		if _, err := b.call("", "Target.closeTarget", map[string]any{"targetId": tid}); err != nil {
			t.Fatalf("Target.closeTarget of the program's wedged tab: %v", err)
		}
	})
	t.Run("another-extensions-page", func(t *testing.T) {
		b := dialRaw(t)
		tid, sid := b.open(srv.URL + "/ext")
		t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": tid}) })
		var err error
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if _, err = b.call(sid, "Runtime.evaluate", map[string]any{"expression": "1+1", "returnByValue": true}); err != nil {
				break
			}
		}
		if err == nil {
			t.Fatal("another extension's frame did not make Chrome refuse the tab: the attack changed")
		}
		if !strings.Contains(err.Error(), "another extension") || !strings.Contains(err.Error(), "frame") {
			t.Errorf("the refusal does not say what happened: %v", err)
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

// A client sets an override on the person's tab; the page then wedges the
// tab (its srcdoc frame at about:srcdoc#x) and the client leaves. Chrome
// checks the frames before a detach too, so the extension's detach was
// refused: the debugger stayed attached to the person's tab, the client's
// user agent (and any Fetch interception, its requests paused for good)
// with it, even after the page let go of the frame (red team, 1 of 1). The
// extension now tries the detach again until Chrome lets it.
func TestRedTeamLeaveWhileWedged(t *testing.T) {
	srv := loopbackServer(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>wedge</title><iframe srcdoc="<p>inner</p>"></iframe>`)
	}))
	ep, tok := endpoint(t)
	tid := userTab(t, srv.URL+"/")
	closeUserTab(t, tid)
	ctx, u := asPerson(t)
	b := dialRawTo(t, ep, tok)
	sid := b.attach(tid)
	b.eval(sid, `document.readyState === 'complete' || new Promise(r => onload = r)`)
	b.must(sid, "Emulation.setUserAgentOverride", map[string]any{"userAgent": "livetab-left-agent"})
	ua := func() string {
		v, err := u.Eval(ctx, tid, "navigator.userAgent")
		if err != nil {
			return err.Error()
		}
		var s string
		jsonv2.Unmarshal(v, &s, wire.Options)
		return s
	}
	if got := ua(); got != "livetab-left-agent" {
		t.Fatalf("the override did not take: %q", got)
	}
	if _, err := u.Eval(ctx, tid, `document.querySelector('iframe').contentWindow.location.hash = 'x'`); err != nil {
		t.Fatal(err)
	}
	if _, err := b.call(sid, "Runtime.evaluate", map[string]any{"expression": "1"}); err == nil {
		t.Fatal("the tab did not wedge: the attack changed")
	}
	b.ws.CloseNow()
	<-b.closed
	time.Sleep(2 * time.Second)
	// The page lets go of the frame (or the person reloads).
	if _, err := u.Eval(ctx, tid, `document.querySelector('iframe').remove()`); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && (chromeAttached(t, u, tid) || ua() == "livetab-left-agent") {
		time.Sleep(200 * time.Millisecond)
	}
	if chromeAttached(t, u, tid) {
		t.Errorf("the extension's debugger stays on the person's tab after its last client left")
	}
	if got := ua(); got == "livetab-left-agent" {
		t.Errorf("the gone client's user agent stays on the person's tab: %q", got)
	}
}
