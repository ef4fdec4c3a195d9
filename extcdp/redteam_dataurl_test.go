package extcdp_test

import (
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// TestRedTeamExtensionOriginGivesNoDebugger: a Page.navigate through
// chrome.debugger is one the extension starts, and about:blank takes the
// origin of who started it: the extension's. A client (a domain list
// allows about:blank) or a data: document's script (the relay writes it
// into such an about:blank) then shares the extension's origin, and the
// extension's own pages are same-origin to it. None of these ways may
// reach chrome.debugger, which drives every tab regardless of the
// person's pause, shares and stops.
func TestRedTeamExtensionOriginGivesNoDebugger(t *testing.T) {
	ctx := newTab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, js string }{
		{"an iframe of the popup", `new Promise(res => {
			const f = document.createElement('iframe');
			f.src = origin + '/popup.html';
			f.onload = () => { try { res(typeof f.contentWindow.chrome.debugger) } catch (e) { res('denied') } };
			document.body.append(f);
			setTimeout(() => res('no load'), 3000);
		})`},
		{"a window of the popup", `new Promise(res => {
			const w = window.open(origin + '/popup.html');
			if (!w) { res('no window'); return }
			setTimeout(() => { try { res(typeof w.chrome.debugger) } catch (e) { res('denied') } finally { try { w.close() } catch {} } }, 1500);
		})`},
	} {
		// With a user gesture, as a raw client may send it: no popup blocker.
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](tc.js, chromedp.EvalAwaitPromise, func(p *runtime.EvaluateParams) { p.UserGesture = new(true) }))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		t.Logf("%s: %s", tc.name, got)
		if got == "object" {
			t.Errorf("%s: a page of the extension's origin reached chrome.debugger", tc.name)
		}
	}
	// The tab itself goes to the extension's page, still attached: the
	// client's next evaluate would run there.
	chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`location.href = origin + '/popup.html'`))
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.protocol + ' ' + typeof chrome?.debugger`))
		if err != nil {
			t.Logf("held: %v", err)
			break
		}
		if got == "chrome-extension: object" {
			t.Fatal("the client's tab went to the extension's own page and its evaluate reached chrome.debugger")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
