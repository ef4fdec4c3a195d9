package extcdp_test

import (
	"fmt"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/internal/browsertest"
)

// TestRedTeamChromeKilledMidCommands: the person's Chrome is killed
// (SIGKILL, as a crash or the OOM killer does) while two endpoint clients
// have commands in flight: an awaitPromise that never resolves, reads of a
// transfer from the page that the page never posted, a Livetab call, a
// Target call. Every pending command, and every command sent after, must be
// answered or failed within a bound (the bridge's reconnect wait, 10 s, plus
// slack), and once the clients leave the relay holds nothing and its
// goroutines are back to where they were.
func TestRedTeamChromeKilledMidCommands(t *testing.T) {
	if env == nil {
		browsertest.RequireChromium(t)
	}
	e := browsertest.Start(t, browsertest.Options{})
	srv := httptest.NewServer(e.Relay.Handler(extcdp.HandlerOptions{Token: "rt-kill"}))
	defer srv.Close()
	url := e.Relay.BrowserURL(strings.TrimPrefix(srv.URL, "http://"), "rt-kill")

	time.Sleep(500 * time.Millisecond)
	before := runtime.NumGoroutine()

	a := dialRawURL(t, url)
	b := dialRawURL(t, url)
	a.bound, b.bound = 200*time.Second, 200*time.Second
	_, sid := a.newTab(t, site.URL+"/form?rt-kill-a")
	_, sidB := b.newTab(t, site.URL+"/form?rt-kill-b")

	tr := a.must(sid, "Livetab.openTransfer", map[string]any{"direction": "fromPage", "size": 1 << 20})
	tid := field(tr, "transfer")
	if tid == "" {
		t.Fatalf("openTransfer: %s", tr)
	}

	type outcome struct {
		name string
		took time.Duration
		msg  string
	}
	var mu sync.Mutex
	var got []outcome
	var wg sync.WaitGroup
	var killedAt time.Time
	fire := func(c *rawClient, name, session, method string, params any) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := c.send(session, method, params)
			mu.Lock()
			defer mu.Unlock()
			took := time.Since(killedAt)
			var msg string
			switch {
			case err != nil:
				msg = "transport: " + err.Error()
			case m.Error != nil:
				msg = fmt.Sprintf("error %d %s", m.Error.Code, m.Error.Message)
			default:
				msg = "result " + string(m.Result)
			}
			got = append(got, outcome{name, took, msg})
		}()
	}

	mu.Lock()
	killedAt = time.Now().Add(time.Hour) // set for real below
	mu.Unlock()
	fire(a, "evaluate never resolves", sid, "Runtime.evaluate", map[string]any{"expression": "new Promise(() => {})", "awaitPromise": true})
	fire(a, "readTransfer never posted", sid, "Livetab.readTransfer", map[string]any{"transfer": tid, "offset": 0, "size": 16})
	fire(a, "transferFile never posted", sid, "Livetab.transferFile", map[string]any{"transfer": tid, "offset": 0})
	fire(b, "B evaluate never resolves", sidB, "Runtime.evaluate", map[string]any{"expression": "new Promise(() => {})", "awaitPromise": true})
	time.Sleep(700 * time.Millisecond)

	mu.Lock()
	killedAt = time.Now()
	mu.Unlock()
	e.Browser.Close() // SIGKILL of the group: a temporary profile
	fire(b, "B Target.createTarget after", "", "Target.createTarget", map[string]any{"url": site.URL + "/form?rt-after"})
	fire(b, "B Target.getTargets after", "", "Target.getTargets", nil)
	fire(a, "A Livetab.getTabs after", sid, "Livetab.getTabs", nil)
	fire(a, "A screenshot after", sid, "Page.captureScreenshot", nil)
	fire(b, "B Target.closeTarget after", "", "Target.closeTarget", map[string]any{"targetId": "nope"})

	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	const bound = 20 * time.Second
	select {
	case <-done:
	case <-time.After(bound + 5*time.Second):
	}
	mu.Lock()
	answered := len(got)
	for _, o := range got {
		t.Logf("%-30s %6.2fs  %s", o.name, o.took.Seconds(), o.msg)
		if o.took > bound {
			t.Errorf("%s: answered only after %v (bound %v)", o.name, o.took.Round(time.Millisecond), bound)
		}
		if strings.HasPrefix(o.msg, "result") && !strings.Contains(o.name, "getTargets") && !strings.Contains(o.name, "closeTarget") {
			t.Errorf("%s: succeeded with Chrome gone: %s", o.name, o.msg)
		}
	}
	mu.Unlock()
	if answered < 9 {
		t.Errorf("%d of 9 commands unanswered %v after Chrome was killed", 9-answered, bound+5*time.Second)
	}

	a.ws.CloseNow()
	b.ws.CloseNow()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) && (runtime.NumGoroutine() > before+5 || e.Relay.Transfers() > 0 || e.Relay.Counts()["clients"] > 0) {
		time.Sleep(200 * time.Millisecond)
	}
	after := runtime.NumGoroutine()
	t.Logf("goroutines before %d, after %d; relay %v; transfers %d", before, after, e.Relay.Counts(), e.Relay.Transfers())
	if after > before+5 {
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		t.Errorf("goroutines: %d before, %d 15 s after the clients left\n%s", before, after, buf[:n])
	}
	if n := e.Relay.Transfers(); n > 0 {
		t.Errorf("%d transfers left after their client left", n)
	}
	if c := e.Relay.Counts(); c["clients"] > 0 || c["sessions"] > 0 {
		t.Errorf("relay holds %v after every client left", c)
	}
	wg.Wait()
}
