// Package unsafeprobe measures which CDP inputs crash or wedge a tab or the
// browser: each input is sent through livetab's relay ("ext") and through
// Chrome's own debugging port ("native"), and the browser, the extension
// and another tab are checked after it. It is a measurement, not a test:
// it runs only with LIVETAB_MEASURE_UNSAFE=1 and prints one RESULT line per
// input (docs/decisions/2026-11-23-chrome-debugger-inputs-emulated-or-refused.md).
// To see what chrome.debugger itself does, disable the relay's guard
// (guardUnsafe in extcdp/client.go) and the extension's backstop first.
package unsafeprobe

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/internal/browsertest"
	"github.com/livetab/livetab/internal/testsite"
)

type world struct {
	env    *browsertest.Env
	srv    *httptest.Server
	canary *conn
	csid   string
}

func startWorld(t *testing.T) *world {
	env, err := browsertest.StartEnv(browsertest.Options{DebugPort: true, SitePerProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	w := &world{env: env}
	w.srv = httptest.NewServer(env.Relay.Handler(extcdp.HandlerOptions{Token: "tok"}))
	w.canary, err = dial(context.Background(), w.extURL())
	if err != nil {
		t.Fatal(err)
	}
	r, _ := w.canary.call(10*time.Second, "", "Target.createTarget", map[string]any{"url": "about:blank"})
	var ct struct{ TargetID string }
	json.Unmarshal(r.Result, &ct)
	r, _ = w.canary.call(10*time.Second, "", "Target.attachToTarget", map[string]any{"targetId": ct.TargetID, "flatten": true})
	var at struct{ SessionID string }
	json.Unmarshal(r.Result, &at)
	w.csid = at.SessionID
	return w
}

func (w *world) extURL() string {
	return w.env.Relay.BrowserURL(strings.TrimPrefix(w.srv.URL, "http://"), "tok")
}

func (w *world) close() {
	w.srv.Close()
	w.env.Close()
}

type tcase struct {
	name   string
	start  string   // the tab's first URL
	prep   []string // JS run before the action
	method string   // "" = Target.createTarget{url: url}
	params string   // JSON with SITE, CHILD, PREV placeholders
	// then are commands sent after the action on the same session (a
	// screenshot after a size was set), each reported on its own.
	then []step
	// wait bounds each command's answer; 8 s unless set.
	wait time.Duration
	// once skips the run with Page.enable first.
	once bool
}

type step struct{ method, params string }

func fill(s, site string, child, prev string) string {
	s = strings.ReplaceAll(s, "SITE", site)
	s = strings.ReplaceAll(s, "CHILD", child)
	s = strings.ReplaceAll(s, "MAIN", child)
	s = strings.ReplaceAll(s, "PREV", prev)
	return s
}

func TestMatrix(t *testing.T) {
	if os.Getenv("LIVETAB_MEASURE_UNSAFE") == "" {
		t.Skip("a measurement: run it with LIVETAB_MEASURE_UNSAFE=1 (LIVETAB_MEASURE_ONLY=substring, LIVETAB_MEASURE_DOOR=ext|native, LIVETAB_MEASURE_LONG=1 for whole short results)")
	}
	site := testsite.Start()
	defer site.Close()
	S := site.URL
	nav := func(name, start, url string, prep ...string) tcase {
		return tcase{name: name, start: start, prep: prep, method: "Page.navigate", params: `{"url":"` + url + `"}`}
	}
	cases := []tcase{
		nav("blank->blank#x", "about:blank", "about:blank#x"),
		nav("blank->blank", "about:blank", "about:blank"),
		nav("blank->blank#", "about:blank", "about:blank#"),
		nav("http->same#frag", "SITE/form", "SITE/form#frag"),
		nav("http#a->http#b", "SITE/form#a", "SITE/form#b"),
		nav("http->same#", "SITE/form", "SITE/form#"),
		nav("http#a->same#a", "SITE/form#a", "SITE/form#a"),
		nav("http->same", "SITE/form", "SITE/form"),
		nav("http->other", "SITE/form", "SITE/inner"),
		nav("http->blank", "SITE/form", "about:blank"),
		nav("http->blank#x", "SITE/form", "about:blank#x"),
		nav("http->srcdoc", "SITE/form", "about:srcdoc"),
		nav("http->data", "SITE/form", "data:text/html,hi"),
		nav("http->data#x", "SITE/form", "data:text/html,hi#x"),
		nav("http->javascript", "SITE/form", "javascript:void(0)"),
		nav("http->javascript-hash", "SITE/form", "javascript:location.hash='j'"),
		nav("http->chrome-version", "SITE/form", "chrome://version"),
		nav("http->chrome-settings", "SITE/form", "chrome://settings"),
		nav("http->chrome-crash", "SITE/form", "chrome://crash"),
		nav("http->file", "SITE/form", "file:///etc/hostname"),
		nav("http->ext-page", "SITE/form", "chrome-extension://"+"x/popup.html"),
		{name: "child-frame nav", start: "SITE/frames", method: "Page.navigate", params: `{"url":"SITE/form","frameId":"CHILD"}`},
		{name: "child-frame #frag", start: "SITE/frames", method: "Page.navigate", params: `{"url":"SITE/inner#frag","frameId":"CHILD"}`},
		{name: "historyEntry same-doc", start: "SITE/form", prep: []string{"location.hash='h1'"}, method: "Page.navigateToHistoryEntry", params: `{"entryId":PREV}`},
		{name: "historyEntry blank same-doc", start: "about:blank", prep: []string{"location.hash='h1'"}, method: "Page.navigateToHistoryEntry", params: `{"entryId":PREV}`},
		{name: "reload http", start: "SITE/form", method: "Page.reload", params: `{}`},
		{name: "reload blank", start: "about:blank", method: "Page.reload", params: `{}`},
		{name: "reload http#a", start: "SITE/form#a", method: "Page.reload", params: `{}`},
		{name: "eval pushState", start: "SITE/form", method: "Runtime.evaluate", params: `{"expression":"history.pushState({}, '', '/pushed'); location.href"}`},
		{name: "eval hash http", start: "SITE/form", method: "Runtime.evaluate", params: `{"expression":"location.hash='e'; location.href"}`},
		{name: "eval hash blank", start: "about:blank", method: "Runtime.evaluate", params: `{"expression":"location.hash='e'; location.href"}`},
		{name: "eval href#blank", start: "about:blank", method: "Runtime.evaluate", params: `{"expression":"location.href='about:blank#f'; location.href"}`},
		{name: "create blank#x", method: "", params: "about:blank#x"},
		{name: "create http#x", method: "", params: "SITE/form#x"},
		{name: "create srcdoc", method: "", params: "about:srcdoc"},
		{name: "create data", method: "", params: "data:text/html,hi"},
		{name: "create javascript", method: "", params: "javascript:void(0)"},
		{name: "create chrome-version", method: "", params: "chrome://version"},
		{name: "create file", method: "", params: "file:///etc/hostname"},
	}
	{
		iframe := func(attr string) string {
			return "var f=document.createElement('iframe');" + attr + ";document.body.appendChild(f);new Promise(r=>f.onload=r)"
		}
		cases = append(cases, []tcase{
			nav("blank(nav)->blank#x", "SITE/form", "about:blank#x", "location.href='about:blank'"),
			nav("blank#a->blank#b", "about:blank#a", "about:blank#b"),
			nav("blank?q->blank?q#x", "about:blank?q", "about:blank?q#x"),
			nav("data->data#x", "data:text/html,hi", "data:text/html,hi#x"),
			nav("file->file#x", "file:///etc/hostname", "file:///etc/hostname#x"),
			nav("relative #x", "SITE/form", "#x"),
			{name: "child blank iframe #x", start: "SITE/form", prep: []string{iframe("")}, method: "Page.navigate", params: `{"url":"about:blank#x","frameId":"CHILD"}`},
			{name: "child srcdoc iframe #x", start: "SITE/form", prep: []string{iframe("f.srcdoc='<p>x</p>'")}, method: "Page.navigate", params: `{"url":"about:srcdoc#x","frameId":"CHILD"}`},
			{name: "main blank#x frameId", start: "about:blank", method: "Page.navigate", params: `{"url":"about:blank#x","frameId":"MAIN"}`},
			{name: "blank#x typed", start: "about:blank", method: "Page.navigate", params: `{"url":"about:blank#x","transitionType":"typed"}`},
			nav("http->chrome-kill", "SITE/form", "chrome://kill"),
			nav("http->chrome-hang", "SITE/form", "chrome://hang"),
			nav("http->chrome-browsercrash", "SITE/form", "chrome://inducebrowsercrashforrealz"),
			nav("http->chrome-gpucrash", "SITE/form", "chrome://gpucrash"),
			{name: "http->browsercrash addressbar", start: "SITE/form", method: "Page.navigate", params: `{"url":"chrome://inducebrowsercrashforrealz","transitionType":"address_bar"}`},
			{name: "http->crash addressbar", start: "SITE/form", method: "Page.navigate", params: `{"url":"chrome://crash","transitionType":"address_bar"}`},
			{name: "create chrome-crash", method: "", params: "chrome://crash"},
			{name: "create browsercrash", method: "", params: "chrome://inducebrowsercrashforrealz"},
			{name: "create chrome-kill", method: "", params: "chrome://kill"},
			{name: "create about:version", method: "", params: "about:version"},
			{name: "create view-source", method: "", params: "view-source:SITE/form"},
		}...)
	}
	{
		cases = append(cases, []tcase{
			{name: "about:browsercrash addressbar", start: "SITE/form", method: "Page.navigate", params: `{"url":"about:inducebrowsercrashforrealz","transitionType":"address_bar"}`},
			nav("about:version", "SITE/form", "about:version"),
			nav("view-source", "SITE/form", "view-source:SITE/form"),
			nav("mailto", "SITE/form", "mailto:a@b.c"),
			nav("http(nav)->blank->blank#x", "SITE/form", "about:blank#x", "0"),
			{name: "blank initial nav via Page.navigate then #x", start: "about:blank", method: "Page.navigate", params: `{"url":"about:blank#x"}`, prep: []string{"NAVBLANK"}},
		}...)
	}
	cases = append(cases, sizeCases()...)
	if f := os.Getenv("LIVETAB_MEASURE_ONLY"); f != "" {
		var keep []tcase
		for _, c := range cases {
			if strings.Contains(c.name, f) {
				keep = append(keep, c)
			}
		}
		cases = keep
	}
	doors := []string{"ext", "native"}
	if d := os.Getenv("LIVETAB_MEASURE_DOOR"); d != "" {
		doors = []string{d}
	}
	w := startWorld(t)
	defer func() { w.close() }()
	for _, c := range cases {
		for _, door := range doors {
			for _, enable := range []bool{false, true} {
				if (c.method == "" || c.once) && enable {
					continue
				}
				out := runCase(t, w, c, S, door, enable)
				alive := true
				select {
				case <-w.env.Browser.Done():
					alive = false
				default:
				}
				if alive && !w.env.Bridge.Connected() {
					time.Sleep(2 * time.Second)
				}
				var canary string
				if alive && w.env.Bridge.Connected() {
					r, err := w.canary.call(3*time.Second, w.csid, "Runtime.evaluate", map[string]any{"expression": "1+1"})
					if err != nil || r.Error != nil {
						canary = fmt.Sprintf("CANARY-FAIL %v %v", err, r.Error)
					}
				}
				verdict := "alive"
				if !alive {
					verdict = "BROWSER-EXITED"
				} else if !w.env.Bridge.Connected() {
					verdict = "EXT-DISCONNECTED"
				}
				fmt.Printf("RESULT | %-28s | %-6s | enable=%-5v | %-15s | %s %s\n", c.name, door, enable, verdict, out, canary)
				if verdict != "alive" || canary != "" {
					w.close()
					w = startWorld(t)
				}
			}
		}
	}
}

func short(b json.RawMessage) string {
	if os.Getenv("LIVETAB_MEASURE_LONG") != "" && len(b) < 2000 {
		return string(b)
	}
	s := string(b)
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

func runCase(t *testing.T, w *world, c tcase, site, door string, enable bool) string {
	url := w.extURL()
	if door == "native" {
		url = w.env.Browser.DebugURL
	}
	cn, err := dial(context.Background(), url)
	if err != nil {
		return "dial: " + err.Error()
	}
	defer cn.ws.CloseNow()
	start := c.start
	if c.method == "" {
		start = fill(c.params, site, "", "")
	}
	start = fill(start, site, "", "")
	t0 := time.Now()
	r, err := cn.call(10*time.Second, "", "Target.createTarget", map[string]any{"url": start})
	if c.method == "" {
		if err != nil {
			return fmt.Sprintf("createTarget NO-REPLY %v", err)
		}
		if r.Error != nil {
			return fmt.Sprintf("createTarget error %q in %v", r.Error.Message, time.Since(t0).Round(time.Millisecond))
		}
	} else if err != nil || r.Error != nil {
		return fmt.Sprintf("setup create failed %v %v", err, r.Error)
	}
	var ct struct{ TargetID string }
	json.Unmarshal(r.Result, &ct)
	defer func() {
		if cn2, err := dial(context.Background(), url); err == nil {
			cn2.call(3*time.Second, "", "Target.closeTarget", map[string]any{"targetId": ct.TargetID})
			cn2.ws.CloseNow()
		}
	}()
	time.Sleep(300 * time.Millisecond) // let the first load settle
	r, err = cn.call(10*time.Second, "", "Target.attachToTarget", map[string]any{"targetId": ct.TargetID, "flatten": true})
	if err != nil || r.Error != nil {
		return fmt.Sprintf("attach failed %v %v", err, r.Error)
	}
	var at struct{ SessionID string }
	json.Unmarshal(r.Result, &at)
	sid := at.SessionID
	if _, err := cn.call(5*time.Second, sid, "Runtime.evaluate", map[string]any{"expression": "1+1"}); err != nil {
		return "setup eval: " + err.Error()
	}
	if c.method == "" {
		return fmt.Sprintf("created in %v; after: %s", time.Since(t0).Round(time.Millisecond), after(cn, sid))
	}
	if enable {
		cn.call(5*time.Second, sid, "Page.enable", nil)
	}
	if c.name == "http(nav)->blank->blank#x" || (len(c.prep) > 0 && c.prep[0] == "NAVBLANK") {
		cn.call(5*time.Second, sid, "Page.navigate", map[string]any{"url": "about:blank"})
		time.Sleep(500 * time.Millisecond)
		c.prep = nil
	}
	for _, js := range c.prep {
		cn.call(5*time.Second, sid, "Runtime.evaluate", map[string]any{"expression": js, "awaitPromise": true})
		time.Sleep(300 * time.Millisecond)
	}
	child, prev := "", "0"
	if strings.Contains(c.params, "CHILD") || strings.Contains(c.params, "MAIN") {
		r, _ := cn.call(5*time.Second, sid, "Page.getFrameTree", nil)
		var ft struct {
			FrameTree struct {
				ChildFrames []struct {
					Frame struct {
						ID  string `json:"id"`
						URL string `json:"url"`
					} `json:"frame"`
				} `json:"childFrames"`
			} `json:"frameTree"`
		}
		json.Unmarshal(r.Result, &ft)
		if strings.Contains(c.params, "MAIN") {
			var m struct {
				FrameTree struct {
					Frame struct {
						ID string `json:"id"`
					} `json:"frame"`
				} `json:"frameTree"`
			}
			json.Unmarshal(r.Result, &m)
			child = m.FrameTree.Frame.ID
		}
		for _, cf := range ft.FrameTree.ChildFrames {
			if strings.HasPrefix(cf.Frame.URL, site) || strings.HasPrefix(cf.Frame.URL, "about:") {
				child = cf.Frame.ID
			}
		}
		if child == "" {
			return "no same-origin child frame: " + short(r.Result)
		}
	}
	if strings.Contains(c.params, "PREV") {
		r, _ := cn.call(5*time.Second, sid, "Page.getNavigationHistory", nil)
		var h struct {
			CurrentIndex int `json:"currentIndex"`
			Entries      []struct {
				ID  int    `json:"id"`
				URL string `json:"url"`
			} `json:"entries"`
		}
		json.Unmarshal(r.Result, &h)
		if h.CurrentIndex < 1 {
			return "no previous entry: " + short(r.Result)
		}
		prev = fmt.Sprint(h.Entries[h.CurrentIndex-1].ID)
	}
	p := fill(c.params, site, child, prev)
	wait := c.wait
	if wait == 0 {
		wait = 8 * time.Second
	}
	stall := w.watchCanary()
	res := sendStep(cn, sid, wait, c.method, p)
	for _, s := range c.then {
		res += "; then " + s.method + ": " + sendStep(cn, sid, wait, s.method, fill(s.params, site, child, prev))
	}
	time.Sleep(1500 * time.Millisecond)
	return res + "; after: " + after(cn, sid) + "; " + stall()
}

// sendStep sends one command and says how it was answered.
func sendStep(cn *conn, sid string, wait time.Duration, method, params string) string {
	t1 := time.Now()
	r, err := cn.call(wait, sid, method, json.RawMessage(params))
	d := time.Since(t1).Round(time.Millisecond)
	switch {
	case err != nil:
		return fmt.Sprintf("NO-REPLY(%v)", err)
	case r.Error != nil:
		return fmt.Sprintf("error %q in %v", r.Error.Message, d)
	default:
		return fmt.Sprintf("ok %s (%d B) in %v", short(r.Result), len(r.Result), d)
	}
}

// watchCanary asks the canary tab, through the relay, for 1+1 every 250 ms
// until the returned func is called, which reports the slowest answer: a
// browser an input wedged answers another tab late or not at all.
func (w *world) watchCanary() func() string {
	stop := make(chan struct{})
	done := make(chan string)
	go func() {
		var worst time.Duration
		fails := 0
		for {
			select {
			case <-stop:
				done <- fmt.Sprintf("canary worst %v, %d unanswered", worst.Round(time.Millisecond), fails)
				return
			case <-time.After(250 * time.Millisecond):
			}
			t0 := time.Now()
			r, err := w.canary.call(5*time.Second, w.csid, "Runtime.evaluate", map[string]any{"expression": "1+1"})
			if err != nil || r.Error != nil {
				fails++
			}
			if d := time.Since(t0); d > worst {
				worst = d
			}
		}
	}()
	return func() string { close(stop); return <-done }
}

func after(cn *conn, sid string) string {
	r, err := cn.call(3*time.Second, sid, "Runtime.evaluate", map[string]any{"expression": "location.href", "returnByValue": true})
	if err != nil {
		return "TAB-WEDGED(" + err.Error() + ")"
	}
	if r.Error != nil {
		return "tab-error " + r.Error.Message
	}
	var v struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
	}
	json.Unmarshal(r.Result, &v)
	return fmt.Sprint("href=", v.Result.Value)
}
