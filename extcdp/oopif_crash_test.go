package extcdp_test

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestCrashedFrameAnswers: the renderer of a page's out-of-process iframe
// dies (out of memory, a crash). A command on its way to the frame and
// the frame's later ones must fail within seconds, not wait out the
// relay's 5-minute bound.
func TestCrashedFrameAnswers(t *testing.T) {
	if env == nil {
		t.Skip("no test browser")
	}
	ctx := context.Background()
	u, err := env.User(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	c := dialRaw(t)
	c.bound = 15 * time.Second
	id, sid := c.open(site.URL + "/frames")
	defer c.send("", "Target.closeTarget", map[string]any{"targetId": id})
	c.eval(sid, "document.readyState == 'complete' || new Promise(ok => onload = ok)")
	c.must(sid, "Target.setAutoAttach", map[string]any{"autoAttach": true, "flatten": true, "waitForDebuggerOnStart": false})
	var child, frameTarget string
	deadline := time.Now().Add(10 * time.Second)
	for frameTarget == "" && time.Now().Before(deadline) {
		for _, info := range targetInfos(t, c) {
			if info.Type == "iframe" && strings.HasPrefix(info.URL, site.CrossURL) {
				frameTarget = info.TargetID
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if frameTarget != "" {
		child = field(c.must("", "Target.attachToTarget", map[string]any{"targetId": frameTarget, "flatten": true}), "sessionId")
	}
	if child == "" {
		t.Fatal("no session on the cross-origin iframe")
	}
	c.must(child, "Runtime.evaluate", map[string]any{"expression": "1"})
	pending := make(chan string, 1)
	go func() {
		m, err := c.send(child, "Runtime.evaluate", map[string]any{"expression": "new Promise(() => {})", "awaitPromise": true})
		switch {
		case err != nil:
			pending <- err.Error()
		case m.Error != nil:
			pending <- m.Error.Message
		default:
			pending <- "answered"
		}
	}()
	time.Sleep(300 * time.Millisecond)
	crashRenderer(t, u, frameTarget)
	start := time.Now()
	got := <-pending
	t.Logf("the frame's command on its way: %q after %v", got, time.Since(start))
	if !strings.Contains(got, "crashed") {
		t.Errorf("the command on its way to the crashed frame: %q, want an error saying it crashed", got)
	}
	start = time.Now()
	m, err := c.send(child, "Runtime.evaluate", map[string]any{"expression": "1+1"})
	t.Logf("a later command: %v %+v after %v", err, m.Error, time.Since(start))
	if err != nil || m.Error == nil || !strings.Contains(m.Error.Message, "Page.reload") {
		t.Errorf("a command on the crashed frame's session: %v %+v, want an error at once saying to reload", err, m.Error)
	}
	// The page itself still answers.
	c.must(sid, "Runtime.evaluate", map[string]any{"expression": "1"})
}
