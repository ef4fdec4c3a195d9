package extcdp_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/internal/browsertest"
)

// A frame that goes to a URL extensions may not access (here an iframe at
// a scheme Chrome does not know) ends the debugger's session on the tab;
// the extension attaches again and the relay keeps the session: a command
// in flight is answered within a bound (an error that says why), the
// session goes on, and what it had enabled is enabled again. The same for
// an error page (a refused connection). Every command gets an answer.
func TestCommandsAnsweredAcrossReattachAndErrorPage(t *testing.T) {
	if env == nil {
		browsertest.RequireChromium(t)
	}
	c := dialRaw(t)
	id, sid := c.open("about:blank")
	defer c.call("", "Target.closeTarget", map[string]any{"targetId": id})
	if err := c.navigate(sid, site.URL+"/form"); err != nil {
		t.Fatal(err)
	}
	c.must(sid, "Page.enable", nil)
	c.must(sid, "Runtime.enable", nil)

	// inFlight sends a command that Chrome holds until the page goes away
	// and reports whether it was answered within the bound.
	inFlight := func() <-chan rawMsg {
		ch := make(chan rawMsg, 1)
		go func() {
			m, err := c.send(sid, "Runtime.evaluate", map[string]any{"expression": "new Promise(() => {})", "awaitPromise": true})
			if err != nil {
				m.Method = err.Error()
			}
			ch <- m
		}()
		time.Sleep(200 * time.Millisecond)
		return ch
	}
	const bound = 10 * time.Second
	contexts := func() int {
		c.mu.Lock()
		defer c.mu.Unlock()
		n := 0
		for _, e := range c.events {
			if e.Method == "Runtime.executionContextCreated" && e.SessionID == sid {
				n++
			}
		}
		return n
	}

	before := contexts()
	pending := inFlight()
	c.must(sid, "Runtime.evaluate", map[string]any{"expression": `setTimeout(() => { const f = document.createElement('iframe'); f.src = 'badurl://localhost/'; document.body.append(f); }, 50); 1`})
	select {
	case m := <-pending:
		if m.Error == nil || !strings.Contains(m.Error.Message, "attached again") {
			t.Fatalf("the command in flight when the debugger's session ended: %s %+v %s", m.Result, m.Error, m.Method)
		}
	case <-time.After(bound):
		t.Fatalf("a command in flight when the debugger's session ended was not answered within %v", bound)
	}
	if got := c.eval(sid, "location.pathname"); got != "/form" {
		t.Fatalf("the session after the reattach: %s", got)
	}
	if seenDetach(c, sid) {
		t.Fatal("the client was told its session ended")
	}
	deadline := time.Now().Add(bound)
	for contexts() == before {
		if time.Now().After(deadline) {
			t.Fatal("Runtime was not enabled again on the new attachment: no executionContextCreated")
		}
		time.Sleep(20 * time.Millisecond)
	}

	// An error page: the command in flight ends with the document.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/"
	l.Close()
	pending = inFlight()
	if err := c.navigate(sid, closed); err == nil || !strings.Contains(err.Error(), "ERR_CONNECTION_REFUSED") {
		t.Fatalf("navigating to a refused port: %v, want Chrome's net::ERR_CONNECTION_REFUSED", err)
	}
	select {
	case m := <-pending:
		if m.Error == nil {
			t.Fatalf("the command in flight at the error page: %s, want an error", m.Result)
		}
	case <-time.After(bound):
		t.Fatalf("a command in flight at an error page was not answered within %v", bound)
	}
	if v, err := c.call(sid, "Runtime.evaluate", map[string]any{"expression": "1+1", "returnByValue": true}); err != nil || !strings.Contains(string(v), "2") {
		t.Fatalf("the session on the error page: %s %v", v, err)
	}
	if seenDetach(c, sid) {
		t.Fatal("the client was told its session ended")
	}
}

func seenDetach(c *rawClient, sid string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.events {
		if (e.Method == "Target.detachedFromTarget" && strings.Contains(string(e.Params), sid)) || (e.Method == "Inspector.detached" && e.SessionID == sid) {
			return true
		}
	}
	return false
}

// What a reattach sends again: the last word of each setting, in order,
// and nothing that acts on the page or the browser rather than the
// attachment.
func TestSetupReplayedAfterReattach(t *testing.T) {
	got := extcdp.SetupAfter([][2]string{
		{"Page.enable", ""},
		{"Network.enable", `{"maxTotalBufferSize":1}`},
		{"Runtime.addBinding", `{"name":"a"}`},
		{"Runtime.addBinding", `{"name":"b"}`},
		{"Page.addScriptToEvaluateOnNewDocument", `{"source":"1"}`},
		{"Emulation.setDeviceMetricsOverride", `{"width":1}`},
		{"Network.disable", ""},
		{"Runtime.removeBinding", `{"name":"a"}`},
		{"Emulation.setDeviceMetricsOverride", `{"width":2}`},
		{"Network.setCookie", `{"name":"x"}`},
		{"DOM.setOuterHTML", `{"nodeId":1}`},
		{"Input.dispatchMouseEvent", `{}`},
		{"Page.removeScriptToEvaluateOnNewDocument", `{"identifier":"1"}`},
		{"Page.setLifecycleEventsEnabled", `{"enabled":true}`},
	})
	want := []string{
		"Page.enable ",
		`Runtime.addBinding {"name":"b"}`,
		`Page.addScriptToEvaluateOnNewDocument {"source":"1"}`,
		`Emulation.setDeviceMetricsOverride {"width":2}`,
		`Page.removeScriptToEvaluateOnNewDocument {"identifier":"1"}`,
		`Page.setLifecycleEventsEnabled {"enabled":true}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("replayed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
