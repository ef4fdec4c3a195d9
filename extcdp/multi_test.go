package extcdp_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
	"github.com/coder/websocket"

	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/internal/fakeext"
	"github.com/livetab/livetab/internal/wire"
)

func closeUserTab(t *testing.T, id string) {
	t.Cleanup(func() {
		if u, err := env.User(context.Background()); err == nil {
			u.CloseTab(context.Background(), id)
			u.Close()
		}
	})
}

func tabStatus(id string) (extcdp.TabStatus, bool) {
	for _, ts := range env.Relay.Status().Tabs {
		if ts.TargetID == id {
			return ts, true
		}
	}
	return extcdp.TabStatus{}, false
}

func TestListingDoesNotAttach(t *testing.T) {
	ctx := newTab(t)
	id := userTab(t, site.URL+"/form?lazy")
	closeUserTab(t, id)
	if _, err := chromedp.Targets(ctx); err != nil {
		t.Fatal(err)
	}
	srv, tok := endpoint(t)
	resp, err := http.Get(srv.URL + "/json/list?token=" + tok)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	ts, ok := tabStatus(id)
	if !ok {
		t.Fatal("the relay does not know the user's tab")
	}
	if ts.Attached {
		t.Fatal("listing tabs attached the debugger to the user's tab (the user would see an infobar)")
	}
}

func TestActiveTab(t *testing.T) {
	ctx := newTab(t)
	id := userTab(t, site.URL+"/form?active")
	closeUserTab(t, id)
	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	if _, err := u.Call(context.Background(), "Target.activateTarget", map[string]string{"targetId": id}); err != nil {
		t.Fatal(err)
	}
	got, err := extcdp.ActiveTab(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != id {
		t.Fatalf("active tab %s, want the one the user just activated, %s", got, id)
	}
}

// ActiveTab takes the allocator's own context too, in-process and over the
// endpoint (what livetab.Connect gives), as its example shows.
func TestActiveTabOnAllocatorContext(t *testing.T) {
	id := userTab(t, site.URL+"/form?active-alloc")
	closeUserTab(t, id)
	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	if _, err := u.Call(context.Background(), "Target.activateTarget", map[string]string{"targetId": id}); err != nil {
		t.Fatal(err)
	}
	srv, tok := endpoint(t)
	ractx, cancelR := remote.NewAllocator(context.Background(), env.Relay.BrowserURL(strings.TrimPrefix(srv.URL, "http://"), tok))
	defer cancelR()
	for name, alloc := range map[string]context.Context{"in-process": env.Allocator(t), "endpoint": ractx} {
		got, err := extcdp.ActiveTab(alloc)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if string(got) != id {
			t.Errorf("%s: active tab %s, want %s", name, got, id)
		}
		// The answer is usable at once, and asking left no tab behind.
		tab, cancel := chromedp.NewContext(alloc, chromedp.WithTargetID(got))
		url, err := chromedp.Run(tab, chromedp.Location())
		cancel()
		if err != nil || !strings.Contains(url, "active-alloc") {
			t.Errorf("%s: attaching to the active tab: %q, %v", name, url, err)
		}
	}
}

// A tab a program opened and kept outlives its context and the program,
// in-process and over the endpoint; a tab it did not open cannot be kept.
func TestKeepTab(t *testing.T) {
	srv, tok := endpoint(t)
	for _, door := range []string{"in-process", "endpoint"} {
		var alloc context.Context
		if door == "in-process" {
			alloc = env.Allocator(t)
		} else {
			ractx, cancel := remote.NewAllocator(context.Background(), env.Relay.BrowserURL(strings.TrimPrefix(srv.URL, "http://"), tok))
			defer cancel()
			alloc = ractx
		}
		tabCtx, cancel := chromedp.NewContext(alloc)
		if err := chromedp.Do(tabCtx, chromedp.Navigate(site.URL+"/form?keep-"+door)); err != nil {
			t.Fatal(err)
		}
		if err := extcdp.Keep(tabCtx); err != nil {
			t.Fatalf("%s: %v", door, err)
		}
		id := string(chromedp.FromContext(tabCtx).Target.TargetID)
		closeUserTab(t, id)
		cancel() // only detaches now
		time.Sleep(300 * time.Millisecond)
		ts, ok := tabStatus(id)
		if !ok || ts.Client || ts.Created || ts.Attached {
			t.Errorf("%s: after the cancel the kept tab is %+v (listed %v), want open, the person's and detached", door, ts, ok)
		}
		// Another program sees it, as any of the person's tabs.
		other, cancelO := chromedp.NewContext(env.Allocator(t), chromedp.WithTargetID(target.ID(id)))
		url, err := chromedp.Run(other, chromedp.Location())
		cancelO()
		if err != nil || !strings.Contains(url, "keep-"+door) {
			t.Errorf("%s: another context on the kept tab: %q, %v", door, url, err)
		}
	}
	// The person's own tab is theirs already.
	id := userTab(t, site.URL+"/form?keep-user")
	closeUserTab(t, id)
	u, cancel := chromedp.NewContext(env.Allocator(t), chromedp.WithTargetID(target.ID(id)))
	defer cancel()
	if err := chromedp.Do(u); err != nil {
		t.Fatal(err)
	}
	if err := extcdp.Keep(u); err == nil || !strings.Contains(err.Error(), "not opened by this connection") {
		t.Errorf("keeping the person's tab: %v", err)
	}
}

// Two clients on one tab share one debugger attachment; the second one's
// Runtime.enable gets the execution contexts replayed, so its queries work.
func TestTwoClientsShareATab(t *testing.T) {
	id := userTab(t, site.URL+"/form?shared")
	closeUserTab(t, id)
	a, cancelA := chromedp.NewContext(env.Allocator(t), chromedp.WithTargetID(target.ID(id)))
	defer cancelA()
	if err := chromedp.Do(a, chromedp.SendKeys(chromedp.CSS("#name"), "from A")); err != nil {
		t.Fatal(err)
	}
	srv, tok := endpoint(t)
	ractx, cancelR := remote.NewAllocator(context.Background(), env.Relay.BrowserURL(strings.TrimPrefix(srv.URL, "http://"), tok))
	defer cancelR()
	b, cancelB := chromedp.NewContext(ractx, chromedp.WithTargetID(target.ID(id)))
	defer cancelB()
	b, cancelT := context.WithTimeout(b, 20*time.Second)
	defer cancelT()
	v, err := chromedp.Run(b, chromedp.Value(chromedp.CSS("#name")))
	if err != nil || v != "from A" {
		t.Fatalf("the second client reads %q, %v", v, err)
	}
	cancelB()
	// A's session survives B leaving.
	if err := chromedp.Do(a, chromedp.Click(chromedp.CSS("#btn"))); err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(a, chromedp.Text(chromedp.CSS("#content")))
	if err != nil || text != "clicked" {
		t.Fatalf("the first client after the second left: %q %v", text, err)
	}
}

// A client that vanishes mid-run has its tabs closed; another client on
// other tabs carries on.
func TestClientCrashDisturbsNoOther(t *testing.T) {
	other := newTab(t)
	if err := chromedp.Do(other, chromedp.Navigate(site.URL+"/form")); err != nil {
		t.Fatal(err)
	}
	srv, tok := endpoint(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, env.Relay.BrowserURL(strings.TrimPrefix(srv.URL, "http://"), tok), nil)
	if err != nil {
		t.Fatal(err)
	}
	ws.Write(ctx, websocket.MessageText, []byte(`{"id":1,"method":"Target.createTarget","params":{"url":"about:blank"}}`))
	var created string
	for created == "" {
		_, data, err := ws.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if s := string(data); strings.HasPrefix(s, `{"id":1,`) {
			created = s[strings.Index(s, `"targetId":"`)+12:]
			created = created[:strings.Index(created, `"`)]
		}
	}
	if _, ok := tabStatus(created); !ok {
		t.Fatal("the created tab is unknown")
	}
	go func() {
		for {
			if _, err := chromedp.Run(other, chromedp.Evaluate[int](`1`)); err != nil {
				return
			}
		}
	}()
	ws.CloseNow() // crash
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, ok := tabStatus(created); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the crashed client's tab is still open")
		}
		env.Relay.Status()
		chromedp.Targets(other) // refreshes the relay's tab list
		time.Sleep(50 * time.Millisecond)
	}
	if err := chromedp.Do(other, chromedp.Click(chromedp.CSS("#btn"))); err != nil {
		t.Fatalf("the other client after the crash: %v", err)
	}
}

// Bad visitors of the bridge are turned away while the real extension
// keeps serving.
func TestBadVisitorsDoNotDisturbTheExtension(t *testing.T) {
	ctx := newTab(t)
	dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wrong, _, err := fakeext.Dial(dctx, env.Bridge.URL(), fakeext.Options{Token: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	if code := readClose(dctx, wrong.WS); code != wire.CloseBadToken {
		t.Fatalf("wrong token: close %d", code)
	}
	second, _, err := fakeext.Dial(dctx, env.Bridge.URL(), fakeext.Options{Token: env.Bridge.Token()})
	if err != nil {
		t.Fatal(err)
	}
	if code := readClose(dctx, second.WS); code != wire.CloseAlreadyPaired {
		t.Fatalf("second extension: close %d", code)
	}
	if _, resp, err := fakeext.Dial(dctx, env.Bridge.URL(), fakeext.Options{Token: env.Bridge.Token(), Origin: "https://evil.example"}); err == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign origin: %v", err)
	}
	sum, err := chromedp.Run(ctx, chromedp.Evaluate[int](`6 * 7`))
	if err != nil || sum != 42 {
		t.Fatalf("the real extension after the visitors: %d %v", sum, err)
	}
}

func readClose(ctx context.Context, ws *websocket.Conn) websocket.StatusCode {
	for {
		_, _, err := ws.Read(ctx)
		if err != nil {
			var ce websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Code
			}
			return -1
		}
	}
}

// A browser context is a group of tabs in the user's profile: chromedp's
// WithNewBrowserContext works, and disposing of it closes its tabs.
func TestNewBrowserContext(t *testing.T) {
	ctx, cancel := chromedp.NewContext(env.Allocator(t), chromedp.WithNewBrowserContext())
	ctx, cancelT := context.WithTimeout(ctx, 30*time.Second)
	defer cancelT()
	if err := chromedp.Do(ctx, chromedp.Navigate(site.URL+"/form")); err != nil {
		t.Fatal(err)
	}
	id := string(chromedp.FromContext(ctx).Target.TargetID)
	if _, ok := tabStatus(id); !ok {
		t.Fatal("the context's tab is unknown")
	}
	cancel()
	if _, open := pageTargets(t)[id]; open {
		t.Fatal("disposing of the browser context left its tab open")
	}
}
