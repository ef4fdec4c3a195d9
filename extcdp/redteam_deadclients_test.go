package extcdp_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/testsite"
	"github.com/livetab/livetab/internal/wire"
)

// nodeClient runs js (with puppeteer-core and playwright-core at hand) as
// a real client of cdpURL, waits until it prints READY, and returns the
// process for the test to kill (SIGKILL) as a crash would.
func nodeClient(t *testing.T, cdpURL, js string, extraEnv ...string) *exec.Cmd {
	t.Helper()
	dir := testsite.ClientsDir()
	_, err := exec.LookPath("node")
	_, statErr := os.Stat(filepath.Join(dir, "node_modules"))
	if err != nil || statErr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node and %s/node_modules are required under CI (scripts/test.sh installs them): %v %v", dir, err, statErr)
		}
		t.Skipf("no node or no node_modules: run `npm ci` in %s", dir)
	}
	cmd := exec.Command("node", "-e", js)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append(extraEnv, "LIVETAB_CDP_URL="+cdpURL, "SITE_URL="+site.URL)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan error, 2)
	read := make(chan struct{})
	// The reader logs through t: it must be done before the test is.
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); <-read })
	go func() {
		defer close(read)
		sc := bufio.NewScanner(out)
		var lines []string
		for sc.Scan() {
			t.Logf("node: %s", sc.Text())
			if strings.Contains(sc.Text(), "READY") {
				select {
				case ready <- nil:
				default:
				}
			}
			lines = append(lines, sc.Text())
		}
		select {
		case ready <- fmt.Errorf("node ended before READY: %s", strings.Join(lines, "\n")):
		default:
		}
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("node did not get READY in 60 s")
	}
	return cmd
}

// personsSession opens a DevTools session of the person's own on the tab.
func personsSession(t *testing.T, target string) (call func(method string, params any) (jsonv2.Value, error)) {
	t.Helper()
	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(u.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := u.Call(ctx, "Target.attachToTarget", map[string]any{"targetId": target, "flatten": true})
	if err != nil {
		t.Fatal(err)
	}
	sid := field(res, "sessionId")
	return func(method string, params any) (jsonv2.Value, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		return u.CallSession(ctx, sid, method, params)
	}
}

// heapMB is the used JS heap of the person's page after a full GC, read
// from the person's own DevTools session.
func heapMB(t *testing.T, call func(string, any) (jsonv2.Value, error)) float64 {
	t.Helper()
	for i := 0; i < 2; i++ {
		if _, err := call("HeapProfiler.collectGarbage", nil); err != nil {
			t.Fatal(err)
		}
	}
	res, err := call("Runtime.getHeapUsage", nil)
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		UsedSize float64 `json:"usedSize"`
	}
	jsonv2.Unmarshal(res, &h, wire.Options)
	return h.UsedSize / (1 << 20)
}

// TestRedTeamDeadClientsHandlesPinThePersonsMemory: Puppeteer, connected
// through the endpoint, holds a handle (page.evaluateHandle, a JSHandle or
// an ElementHandle: what every script of it does) to an object of a tab the
// person opened, and is killed (SIGKILL) mid-work. Another client (an
// agent that keeps the person's tab, say livetab mcp) stays attached to the
// same tab. Chrome has one debugger session per tab for the extension, and
// the remote objects it hands out are that session's: they are freed when
// the debugger leaves the tab, or by Runtime.releaseObject(Group). The
// relay takes back what a leaving client set on the page (leftstate.go),
// but not the objects it was given: each dead client's handles stay
// reachable in the person's page for as long as the other client stays,
// and a client that crashes and is restarted (a supervisor, a retry loop)
// grows the person's tab without bound, until it dies of memory.
func TestRedTeamDeadClientsHandlesPinThePersonsMemory(t *testing.T) {
	srv, tok := endpoint(t)
	cdpURL := env.Relay.BrowserURL(strings.TrimPrefix(srv.URL, "http://"), tok)
	id := userTab(t, site.URL+"/form?dead-handles")
	closeUserTab(t, id)
	// The client that stays (any program with a session on the tab).
	b := dialRawTo(t, srv, tok)
	sb := b.attach(id)
	b.eval(sb, "1")
	person := personsSession(t, id)
	base := heapMB(t, person)
	t.Logf("the person's page heap before: %.1f MiB", base)
	const rounds, mb = 3, 64
	js := `
const puppeteer = require('puppeteer-core');
(async () => {
  const browser = await puppeteer.connect({browserWSEndpoint: process.env.LIVETAB_CDP_URL, defaultViewport: null});
  let page;
  for (let i = 0; i < 100 && !page; i++) {
    for (const p of await browser.pages()) if (p.url().includes('dead-handles')) page = p;
    if (!page) await new Promise(r => setTimeout(r, 100));
  }
  if (!page) throw new Error('no person tab');
  // A big object of the page, a handle to it kept, and a WeakRef in the
  // page to see whether it outlives the client.
  const h = await page.evaluateHandle((n, i) => {
    const big = new Array(n).fill(0.5);
    (window.__refs = window.__refs || []).push(new WeakRef(big));
    return big;
  }, ` + fmt.Sprint(mb<<17) + `, 0);
  console.log('READY');
  await new Promise(() => {}); // mid-work: killed here
})().catch(e => { console.error(e); process.exit(1); });
`
	for i := 0; i < rounds; i++ {
		cmd := nodeClient(t, cdpURL, js)
		cmd.Process.Kill()
		cmd.Wait()
	}
	// The endpoint notices the closes, and the relay lets go of the
	// clients that left.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && env.Relay.Status().Clients > 1; {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second)
	after := heapMB(t, person)
	alive, err := person("Runtime.evaluate", map[string]any{"expression": "(window.__refs||[]).filter(r => r.deref() !== undefined).length", "returnByValue": true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the person's page heap after %d Puppeteer clients were killed, one client staying: %.1f MiB (was %.1f); objects still alive: %s; relay clients %d", rounds, after, base, alive, env.Relay.Status().Clients)
	if after-base > mb {
		t.Errorf("the person's page holds %.0f MiB more after %d killed clients left (each held a %d MiB object by a handle): what a dead client was given stays pinned in the person's tab while another client stays (alive: %s)", after-base, rounds, mb, alive)
	}
	// B still works; once B leaves too the debugger leaves the tab, and
	// the objects go with it (the control: nothing but the handles held them).
	b.eval(sb, "1")
	b.ws.CloseNow()
	<-b.closed
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if ts, ok := tabStatus(id); !ok || !ts.Attached {
			break
		}
	}
	time.Sleep(500 * time.Millisecond)
	t.Logf("after the staying client left too: %.1f MiB", heapMB(t, person))
}

// TestRedTeamDetachedClientsObjectsStay: as
// TestRedTeamDeadClientsHandlesPinThePersonsMemory, but the client leaves
// politely: it detaches from the tab (Target.detachFromTarget, what
// page.close of a shared page or a disconnect does) and stays connected.
// Its objects, without a group or in a group of its own, stay pinned.
func TestRedTeamDetachedClientsObjectsStay(t *testing.T) {
	srv, tok := endpoint(t)
	id := userTab(t, site.URL+"/form?detached-objects")
	closeUserTab(t, id)
	b := dialRawTo(t, srv, tok)
	sb := b.attach(id)
	b.eval(sb, "1")
	person := personsSession(t, id)
	base := heapMB(t, person)
	a := dialRawTo(t, srv, tok)
	sa := a.attach(id)
	a.must(sa, "Runtime.evaluate", map[string]any{"expression": "new Array(64 << 17).fill(0.5)"})
	a.must(sa, "Runtime.evaluate", map[string]any{"expression": "new Array(64 << 17).fill(0.25)", "objectGroup": "mine"})
	a.must("", "Target.detachFromTarget", map[string]any{"sessionId": sa})
	time.Sleep(500 * time.Millisecond)
	after := heapMB(t, person)
	t.Logf("the person's page heap: %.1f MiB before, %.1f MiB after A detached (A stays connected)", base, after)
	if after-base > 64 {
		t.Errorf("the person's page holds %.0f MiB more after A detached from it: A's objects (one without a group, one in its group) stay pinned", after-base)
	}
}
