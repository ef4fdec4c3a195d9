package page_test

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	cdptarget "github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/page"
)

// fakeGuard records what the Page asks and refuses what its funcs say.
type fakeGuard struct {
	mu         sync.Mutex
	actions    []page.Action
	requests   []page.Request
	denyAction func(page.Action) error
	denyReq    func(page.Request) error
}

func (g *fakeGuard) CheckAction(_ context.Context, a page.Action) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.actions = append(g.actions, a)
	if g.denyAction != nil {
		return g.denyAction(a)
	}
	return nil
}

func (g *fakeGuard) CheckRequest(_ context.Context, r page.Request) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.requests = append(g.requests, r)
	if g.denyReq != nil {
		return g.denyReq(r)
	}
	return nil
}

func (g *fakeGuard) last() page.Action {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.actions[len(g.actions)-1]
}

func (g *fakeGuard) set(da func(page.Action) error, dr func(page.Request) error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.denyAction, g.denyReq = da, dr
}

var errNo = errors.New("guard says no")

func testGuard(t *testing.T, s *suite) {
	g := &fakeGuard{}
	p, ctx, tab := s.openTab(t, "/actions.html", page.WithGuard(g))
	if a := g.last(); a.Kind != page.KindNavigate || a.Target != s.srv.URL+"/actions.html" || a.Tab != "1" || a.TargetID == "" {
		t.Fatalf("navigate action: %+v", a)
	}
	snap := snapshot(t, ctx, p, page.SnapshotOptions{})
	if a := g.last(); a.Kind != page.KindRead || a.Op != "snapshot" || a.URL != s.srv.URL+"/actions.html" {
		t.Fatalf("snapshot action: %+v", a)
	}
	btn := find(t, snap, "button", "Press me")

	// A denied click sends nothing to the tab.
	g.set(func(a page.Action) error {
		if a.Op == "click" {
			return errNo
		}
		return nil
	}, nil)
	err := p.Click(ctx, page.Index(btn.Index), page.ClickOptions{})
	if !errors.Is(err, errNo) {
		t.Fatalf("denied click: %v", err)
	}
	if a := g.last(); a.Kind != page.KindAct || a.Element == nil || a.Element.Name != "Press me" || a.Sensitive() {
		t.Errorf("click action: %+v", a)
	}
	res, err := p.Call(ctx, "browser_click", []byte(`{"selector": "#btn"}`))
	if err != nil || !res.IsError || !strings.Contains(res.Text, errNo.Error()) {
		t.Errorf("denied click tool: %+v %v", res, err)
	}
	wantLog(t, ctx, p)
	g.set(nil, nil)

	// Typing by selector may be a secret: the guard cannot see the field.
	if err := p.Type(ctx, page.Selector("#text"), "x", page.TypeOptions{}); err != nil {
		t.Fatal(err)
	}
	if a := g.last(); a.Op != "type" || a.Text != "x" || !a.Sensitive() {
		t.Errorf("type action: %+v", a)
	}

	// Every document request waits for the guard, each redirect hop too;
	// a refused hop fails the navigation with the guard's reason.
	other, _ := url.Parse(s.other.URL)
	g.set(nil, func(r page.Request) error {
		if strings.Contains(r.URL, other.Host) {
			return errNo
		}
		return nil
	})
	target := s.other.URL + "/nav2.html"
	err = p.Navigate(ctx, s.srv.URL+"/redirect?to="+url.QueryEscape(target))
	var be *page.BlockedError
	if !errors.As(err, &be) || !errors.Is(err, errNo) || be.URL != target {
		t.Fatalf("a blocked redirect hop: %v", err)
	}
	g.mu.Lock()
	var hop *page.Request
	for i, r := range g.requests {
		if r.URL == target {
			hop = &g.requests[i]
		}
	}
	g.mu.Unlock()
	if hop == nil || !hop.Redirect || !hop.MainFrame || !hop.During {
		t.Fatalf("the redirect hop: %+v", hop)
	}
	g.set(nil, nil)
	if err := p.Navigate(ctx, s.srv.URL+"/actions.html"); err != nil {
		t.Fatal(err)
	}
	snap = snapshot(t, ctx, p, page.SnapshotOptions{})

	// Do hands the element to other packages, under the guard.
	msg, err := p.Do(ctx, page.Action{Kind: page.KindCapture, Op: "probe", Ref: page.Index(find(t, snap, "textbox", "Text field").Index)},
		func(ctx context.Context, el runtime.RemoteObjectID) (string, error) {
			res, err := chromedp.Call(ctx, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
				FunctionDeclaration: "function () { return this.id }", ObjectID: el, ReturnByValue: new(true),
			})
			if err != nil {
				return "", err
			}
			return string(res.Result.Value), nil
		})
	if err != nil || msg != `"text"` {
		t.Errorf("Do: %q %v", msg, err)
	}
	if a := g.last(); a.Kind != page.KindCapture || a.Element == nil {
		t.Errorf("Do's action: %+v", a)
	}
	g.set(func(page.Action) error { return errNo }, nil)
	ran := false
	if _, err := p.Do(ctx, page.Action{Kind: page.KindUpload, Op: "upload"}, func(context.Context, runtime.RemoteObjectID) (string, error) {
		ran = true
		return "", nil
	}); !errors.Is(err, errNo) || ran {
		t.Errorf("a denied Do ran (%v): %v", ran, err)
	}
	g.set(nil, nil)

	// A tab the Page did not open (the program's own here; through livetab
	// another program's tabs are out of reach): attached, marked adopted,
	// let go of by CloseTab and left open.
	other2, cancelOther := chromedp.NewContext(tab)
	defer cancelOther()
	if err := chromedp.Do(other2, chromedp.Navigate(s.srv.URL+"/nav2.html")); err != nil {
		t.Fatal(err)
	}
	id := string(chromedp.FromContext(other2).Target.TargetID)
	ti, err := p.AttachTab(ctx, id)
	if err != nil || !ti.Adopted || ti.Opened || !ti.Current {
		t.Fatalf("AttachTab: %+v %v", ti, err)
	}
	snapshot(t, ctx, p, page.SnapshotOptions{})
	if a := g.last(); !a.Adopted || a.TargetID != id || !strings.HasSuffix(a.URL, "/nav2.html") {
		t.Errorf("action on an adopted tab: %+v", a)
	}
	// A window the adopted tab opens (the person's compose window) is
	// the person's too: adopted, not opened by the Page, let go of and
	// left open by CloseTab.
	if _, err := chromedp.Run(other2, chromedp.Evaluate[bool](`window.open(location.href + "?from-adopted"); true`, func(p *runtime.EvaluateParams) { p.UserGesture = new(true) })); err != nil {
		t.Fatal(err)
	}
	var pop page.TabInfo
	for deadline := time.Now().Add(10 * time.Second); pop.ID == "" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		tabs, _ := p.Tabs(ctx)
		for _, tb := range tabs {
			if strings.Contains(tb.URL, "from-adopted") {
				pop = tb
			}
		}
	}
	if pop.ID == "" || !pop.Adopted || pop.Opened {
		t.Fatalf("the adopted tab's window: %+v", pop)
	}
	// Let go of once attached, and never attached (on plain Chrome an
	// attach only to close it closed the person's window).
	if err := p.CloseTab(ctx, pop.ID); err != nil {
		t.Fatal(err)
	}
	if err := p.SwitchTab(ctx, pop.ID); err == nil {
		t.Errorf("the window let go of is still the Page's")
	}
	time.Sleep(300 * time.Millisecond)
	if targets, err := chromedp.Targets(other2); err != nil || !slices.ContainsFunc(targets, func(ti *cdptarget.Info) bool { return ti.TargetID == cdptarget.ID(pop.TargetID) }) {
		t.Errorf("the adopted tab's window is gone after CloseTab of it unattached (%v)", err)
	}
	if _, err := p.AttachTab(ctx, pop.TargetID); err != nil {
		t.Fatal(err)
	}
	tabs, _ := p.Tabs(ctx)
	for _, tb := range tabs {
		if tb.TargetID == pop.TargetID {
			pop = tb
		}
	}
	if err := p.CloseTab(ctx, pop.ID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if targets, err := chromedp.Targets(other2); err != nil || !slices.ContainsFunc(targets, func(ti *cdptarget.Info) bool { return ti.TargetID == cdptarget.ID(pop.TargetID) }) {
		t.Errorf("the adopted tab's window is gone after CloseTab of it attached (%v)", err)
	}
	if err := p.SwitchTab(ctx, ti.ID); err != nil {
		t.Fatal(err)
	}
	if err := p.CloseTab(ctx, ti.ID); err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(other2, chromedp.Title())
	if err != nil || title != "Second page" {
		t.Errorf("the person's tab after CloseTab: %q %v", title, err)
	}
	tabs, _ = p.Tabs(ctx)
	for _, tb := range tabs {
		if tb.TargetID == id {
			t.Errorf("CloseTab kept the adopted tab: %+v", tabs)
		}
	}
}
