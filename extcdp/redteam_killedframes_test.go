package extcdp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
)

// framesProbe is what the person's page reads of its network and looks.
const framesProbe = `Promise.all([navigator.onLine, matchMedia('(prefers-color-scheme: dark)').matches, matchMedia('print').matches, fetch('/echo').then(r => r.text()).catch(e => 'failed')]).then(JSON.stringify)`

// probeFrames reads framesProbe in the person's tab id and in its
// cross-site frame (a renderer of its own), from DevTools sessions of the
// person's own.
func probeFrames(t *testing.T, id string) (top, frame string) {
	t.Helper()
	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	v, err := u.Eval(ctx, id, framesProbe)
	if err != nil {
		t.Fatal(err)
	}
	top = string(v)
	res, err := u.Call(ctx, "Target.getTargets", nil)
	if err != nil {
		t.Fatal(err)
	}
	var ts struct {
		TargetInfos []struct {
			TargetID string `json:"targetId"`
			Type     string `json:"type"`
			URL      string `json:"url"`
			ParentID string `json:"parentId"`
		} `json:"targetInfos"`
	}
	jsonv2.Unmarshal(res, &ts, wire.Options)
	for _, ti := range ts.TargetInfos {
		if ti.Type == "iframe" && strings.HasPrefix(ti.URL, site.CrossURL) && ti.ParentID == id {
			res, err := u.Call(ctx, "Target.attachToTarget", map[string]any{"targetId": ti.TargetID, "flatten": true})
			if err != nil {
				t.Fatal(err)
			}
			sid := field(res, "sessionId")
			r, err := u.CallSession(ctx, sid, "Runtime.evaluate", map[string]any{"expression": framesProbe, "awaitPromise": true, "returnByValue": true})
			u.Call(ctx, "Target.detachFromTarget", map[string]any{"sessionId": sid})
			if err != nil {
				t.Fatal(err)
			}
			var out struct {
				Result struct {
					Value string `json:"value"`
				} `json:"result"`
			}
			jsonv2.Unmarshal(r, &out, wire.Options)
			return top, out.Result.Value
		}
	}
	t.Fatal("no cross-site frame in the person's tab")
	return
}

// TestRedTeamKilledPlaywrightLeavesTheFrames: Playwright, connected over
// CDP through the endpoint, sets its context offline, adds a header to
// every request and emulates dark mode and print media on a tab the person
// opened, whose cross-site frame runs in a renderer of its own (Playwright
// sets each on the frame's session too), then is killed (SIGKILL). Another
// client stays on the tab. The person's page and its frame must be as
// before Playwright came.
func TestRedTeamKilledPlaywrightLeavesTheFrames(t *testing.T) {
	srv, tok := endpoint(t)
	cdpURL := env.Relay.BrowserURL(strings.TrimPrefix(srv.URL, "http://"), tok)
	id := userTab(t, site.URL+"/frames?killed-pw")
	closeUserTab(t, id)
	b := dialRawTo(t, srv, tok)
	sb := b.attach(id)
	b.eval(sb, "1")
	time.Sleep(time.Second) // the frames load
	top0, frame0 := probeFrames(t, id)
	t.Logf("before: top %s frame %s", top0, frame0)
	js := `
const { chromium } = require('playwright-core');
(async () => {
  const browser = await chromium.connectOverCDP(process.env.LIVETAB_CDP_URL);
  let page;
  for (let i = 0; i < 100 && !page; i++) {
    for (const c of browser.contexts()) for (const p of c.pages()) if (p.url().includes('killed-pw')) page = p;
    if (!page) await new Promise(r => setTimeout(r, 100));
  }
  if (!page) throw new Error('no person tab');
  const ctx = page.context();
  await ctx.setOffline(true);
  await ctx.setExtraHTTPHeaders({'X-Livetab': 'left-by-playwright'});
  await page.emulateMedia({ colorScheme: 'dark', media: 'print' });
  const f = page.frames().find(f => f.url().includes('localhost'));
  console.log('frame ' + (f && f.url()) + ' ' + (f && await f.evaluate(() => navigator.onLine + ' ' + matchMedia('(prefers-color-scheme: dark)').matches)));
  console.log('READY');
  await new Promise(() => {});
})().catch(e => { console.error(e); process.exit(1); });
`
	cmd := nodeClient(t, cdpURL, js)
	topOn, frameOn := probeFrames(t, id)
	t.Logf("with Playwright: top %s frame %s", topOn, frameOn)
	cmd.Process.Kill()
	cmd.Wait()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && env.Relay.Status().Clients > 1; {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second)
	top1, frame1 := probeFrames(t, id)
	t.Logf("after the kill: top %s frame %s", top1, frame1)
	if top1 != top0 {
		t.Errorf("the person's page after Playwright was killed: %s, was %s", top1, top0)
	}
	if frame1 != frame0 {
		t.Errorf("the person's cross-site frame after Playwright was killed: %s, was %s", frame1, frame0)
	}
	b.eval(sb, "1")
}
