package extcdp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/coder/websocket"

	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/internal/wire"
)

// TestRedTeamWedgingCallOutlivesNoClient: Runtime.callFunctionOn, which
// Puppeteer's and Playwright's page.evaluate(fn) send, takes no timeout:
// a function that never returns held the person's tab after its client
// left (measured: no answer in 15 s). On a tab the client did not open
// the relay runs the call as a Runtime.evaluate, which Chrome bounds.
func TestRedTeamWedgingCallOutlivesNoClient(t *testing.T) {
	defer extcdp.SetSyncScriptBound(wedgeBound)()
	person := func(t *testing.T, name string) (*rawClient, string, string, string) {
		t.Helper()
		a, sa, id := wedgePerson(t, name)
		btn := objectID(t, a.must(sa, "Runtime.evaluate", map[string]any{"expression": `document.getElementById("btn")`}))
		return a, sa, id, btn
	}
	t.Run("left", func(t *testing.T) {
		a, sa, id, btn := person(t, "call-left")
		go a.send(sa, "Runtime.callFunctionOn", map[string]any{"objectId": btn, "functionDeclaration": "function() { while (true) {} }"})
		time.Sleep(500 * time.Millisecond) // the loop runs
		a.ws.CloseNow()
		<-a.closed
		if got := personClicks(t, id); got != "1" {
			t.Fatalf("the page counted %q clicks of the person's, want 1", got)
		}
	})
	t.Run("connected", func(t *testing.T) {
		a, sa, id, _ := person(t, "call-connected")
		a.bound = personWaits
		ctx := contextID(t, a, sa)
		got, err := a.call(sa, "Runtime.callFunctionOn", map[string]any{"executionContextId": ctx, "functionDeclaration": "() => { while (true) {} }", "awaitPromise": true})
		if err != nil || !strings.Contains(string(got), `"exceptionDetails"`) || !strings.Contains(string(got), "Target.createTarget") || !strings.Contains(string(got), "Runtime.callFunctionOn") {
			t.Fatalf("a function that never returns on the person's tab: %s %v, want an exception that says why it ended and what to do", got, err)
		}
		if got := personClicks(t, id); got != "1" {
			t.Fatalf("the page counted %q clicks of the person's, want 1", got)
		}
	})
	// What the call gives is what Chrome's own callFunctionOn gives.
	t.Run("same", func(t *testing.T) {
		a, sa, _, btn := person(t, "call-same")
		a.bound = personWaits
		ctx := contextID(t, a, sa)
		other := objectID(t, a.must(sa, "Runtime.evaluate", map[string]any{"expression": `({n: 7})`}))
		for _, c := range []struct {
			name   string
			params map[string]any
			want   string // in the result
		}{
			{"this and arguments", map[string]any{
				"objectId":            btn,
				"functionDeclaration": "function(a, b, c) { return [this.id, a, b.n, typeof c, String(c)] }",
				"arguments":           []any{map[string]any{"value": "x"}, map[string]any{"objectId": other}, map[string]any{"unserializableValue": "-Infinity"}},
				"returnByValue":       true,
			}, `"value":["btn","x",7,"number","-Infinity"]`},
			{"no object: this is the global one, strict too", map[string]any{
				"executionContextId":  ctx,
				"functionDeclaration": "function() { 'use strict'; return this === window }",
				"returnByValue":       true,
			}, `"value":true`},
			{"sloppy this", map[string]any{
				"executionContextId":  ctx,
				"functionDeclaration": "function() { return this === window }",
				"returnByValue":       true,
			}, `"value":true`},
			{"arrow this", map[string]any{
				"objectId":            btn,
				"functionDeclaration": "() => this === window",
				"returnByValue":       true,
			}, `"value":true`},
			{"no local names", map[string]any{
				"objectId":            btn,
				"functionDeclaration": "function() { return [typeof f, typeof t, typeof a, arguments.length] }",
				"returnByValue":       true,
			}, `"value":["undefined","undefined","undefined",0]`},
			{"awaited", map[string]any{
				"objectId":            btn,
				"functionDeclaration": "async function() { await new Promise(ok => setTimeout(ok, 10)); return this.tagName }",
				"returnByValue":       true, "awaitPromise": true,
			}, `"value":"BUTTON"`},
			{"remote result", map[string]any{
				"objectId":            btn,
				"functionDeclaration": "function() { return this }",
			}, `"className":"HTMLButtonElement"`},
			{"thrown", map[string]any{
				"objectId":            btn,
				"functionDeclaration": "function() { throw new Error('boom') }",
			}, `"exceptionDetails"`},
			{"not a function", map[string]any{
				"objectId":            btn,
				"functionDeclaration": "42",
			}, `does not evaluate to a function`},
		} {
			got, err := a.call(sa, "Runtime.callFunctionOn", c.params)
			if err != nil {
				if strings.Contains(err.Error(), c.want) {
					continue
				}
				t.Errorf("%s: %v", c.name, err)
				continue
			}
			if !strings.Contains(string(got), c.want) {
				t.Errorf("%s: got %s, want it to hold %s", c.name, got, c.want)
			}
		}
		// Nothing of the relay's is left on the page's global object.
		left := a.must(sa, "Runtime.evaluate", map[string]any{"expression": `Object.getOwnPropertyNames(window).filter(n => n.includes("livetab")).join()`, "returnByValue": true})
		if !strings.Contains(string(left), `"value":""`) {
			t.Errorf("the page's global object holds %s after the calls, want nothing of livetab's", left)
		}
	})
}

// TestCallOnAHostilePage: a page that replaces what the relay's kept call
// could lean on (globalThis, Object.defineProperty) neither breaks a
// client's call on the person's tab nor escapes its bound.
func TestCallOnAHostilePage(t *testing.T) {
	defer extcdp.SetSyncScriptBound(wedgeBound)()
	a, sa, id := wedgePerson(t, "call-hostile")
	a.bound = personWaits
	a.eval(sa, `window.globalThis = {}; Object.defineProperty = () => { throw new Error("the page's") }; 1`)
	btn := objectID(t, a.must(sa, "Runtime.evaluate", map[string]any{"expression": `document.getElementById("btn")`}))
	got, err := a.call(sa, "Runtime.callFunctionOn", map[string]any{"objectId": btn, "functionDeclaration": "function(s) { return this.id + s }", "arguments": []any{map[string]any{"value": "!"}}, "returnByValue": true})
	if err != nil || !strings.Contains(string(got), `"value":"btn!"`) {
		t.Fatalf("a call on a hostile page: %s %v", got, err)
	}
	got, err = a.call(sa, "Runtime.callFunctionOn", map[string]any{"objectId": btn, "functionDeclaration": "function() { for (;;) {} }"})
	if err != nil || !strings.Contains(string(got), "Target.createTarget") {
		t.Fatalf("a loop on a hostile page: %s %v, want the bound's exception", got, err)
	}
	if got := personClicks(t, id); got != "1" {
		t.Fatalf("the page counted %q clicks of the person's, want 1", got)
	}
}

// wedgePerson opens a tab as the person, attaches a raw client to it and
// has the page count clicks on its button.
func wedgePerson(t *testing.T, name string) (*rawClient, string, string) {
	t.Helper()
	srv, tok := endpoint(t)
	id := userTab(t, site.URL+"/form?wedge-"+name)
	closeUserTab(t, id)
	a := dialRawTo(t, srv, tok)
	sa := a.attach(id)
	a.eval(sa, countClicks)
	return a, sa, id
}

// objectID reads result.objectId of a Runtime result.
func objectID(t *testing.T, res jsonv2.Value) string {
	t.Helper()
	var v struct {
		Result struct {
			ObjectID string `json:"objectId"`
		} `json:"result"`
	}
	if err := jsonv2.Unmarshal(res, &v, wire.Options); err != nil || v.Result.ObjectID == "" {
		t.Fatalf("no objectId in %s: %v", res, err)
	}
	return v.Result.ObjectID
}

// contextID is the id of the page's main world, from the
// Runtime.executionContextCreated events the session gets.
func contextID(t *testing.T, a *rawClient, sa string) int64 {
	t.Helper()
	a.must(sa, "Runtime.enable", nil)
	for range 50 {
		a.mu.Lock()
		evs := append([]rawMsg(nil), a.events...)
		a.mu.Unlock()
		for _, ev := range evs {
			if ev.SessionID != sa || ev.Method != "Runtime.executionContextCreated" {
				continue
			}
			var p struct {
				Context struct {
					ID      int64 `json:"id"`
					AuxData struct {
						IsDefault bool `json:"isDefault"`
					} `json:"auxData"`
				} `json:"context"`
			}
			if jsonv2.Unmarshal(ev.Params, &p, wire.Options) == nil && p.Context.AuxData.IsDefault {
				return p.Context.ID
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("no default execution context was announced")
	return 0
}

// TestRedTeamSideEffectFreeLoop: throwOnSideEffect stops a script at its
// first write, but a loop writes nothing: a call with it ran as Chrome's
// own callFunctionOn, unbounded, and held the person's tab.
func TestRedTeamSideEffectFreeLoop(t *testing.T) {
	defer extcdp.SetSyncScriptBound(wedgeBound)()
	a, sa, id := wedgePerson(t, "call-sideeffect")
	a.bound = personWaits
	btn := objectID(t, a.must(sa, "Runtime.evaluate", map[string]any{"expression": `document.getElementById("btn")`}))
	got, err := a.call(sa, "Runtime.callFunctionOn", map[string]any{"objectId": btn, "functionDeclaration": "function(n) { return this.id + n }", "arguments": []any{map[string]any{"value": 1}}, "throwOnSideEffect": true, "returnByValue": true})
	if err != nil || !strings.Contains(string(got), `"value":"btn1"`) {
		t.Fatalf("a side-effect-free call on the person's tab: %s %v", got, err)
	}
	got, err = a.call(sa, "Runtime.callFunctionOn", map[string]any{"objectId": btn, "functionDeclaration": "function() { this.title = 'x' }", "throwOnSideEffect": true})
	if err != nil || !strings.Contains(string(got), "EvalError") {
		t.Fatalf("a call with a side effect: %s %v, want Chrome's EvalError", got, err)
	}
	got, err = a.call(sa, "Runtime.evaluate", map[string]any{"expression": `Object.getOwnPropertyNames(window).filter(n => n.includes("livetab")).join()`, "returnByValue": true})
	if err != nil || !strings.Contains(string(got), `"value":""`) {
		t.Fatalf("the page's global object after the calls: %s %v, want nothing of livetab's", got, err)
	}
	go a.send(sa, "Runtime.callFunctionOn", map[string]any{"objectId": btn, "functionDeclaration": "function() { for (;;) {} }", "throwOnSideEffect": true})
	time.Sleep(500 * time.Millisecond)
	a.ws.CloseNow()
	<-a.closed
	if got := personClicks(t, id); got != "1" {
		t.Fatalf("the page counted %q clicks of the person's, want 1", got)
	}
}

// TestRedTeamCallTheRelayCannotRead: params the relay cannot decode
// (a name given twice, which the relay's JSON refuses and Chrome's takes)
// went to Chrome as they came, as Chrome's own unbounded call.
func TestRedTeamCallTheRelayCannotRead(t *testing.T) {
	defer extcdp.SetSyncScriptBound(wedgeBound)()
	a, sa, id := wedgePerson(t, "call-unread")
	a.bound = personWaits
	btn := objectID(t, a.must(sa, "Runtime.evaluate", map[string]any{"expression": `document.getElementById("btn")`}))
	msg := `{"id":9001,"sessionId":"` + sa + `","method":"Runtime.callFunctionOn","params":{"objectId":"` + btn + `","functionDeclaration":"function() { for (;;) {} }","silent":true,"silent":true}}`
	if err := a.ws.Write(context.Background(), websocket.MessageText, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	a.ws.CloseNow()
	<-a.closed
	if got := personClicks(t, id); got != "1" {
		t.Fatalf("the page counted %q clicks of the person's, want 1", got)
	}
}

// TestRedTeamCallOnAnOddObjectID: V8 reads an object id's numbers as
// strtol does ("+1", "01", " 1"); the relay, reading the world from it,
// did not, and sent such a call as Chrome's own, unbounded.
func TestRedTeamCallOnAnOddObjectID(t *testing.T) {
	defer extcdp.SetSyncScriptBound(wedgeBound)()
	a, sa, id := wedgePerson(t, "call-oddid")
	a.bound = personWaits
	btn := objectID(t, a.must(sa, "Runtime.evaluate", map[string]any{"expression": `document.getElementById("btn")`}))
	p := strings.Split(btn, ".")
	for _, odd := range []string{p[0] + ".+" + p[1] + "." + p[2], p[0] + ".0" + p[1] + "." + p[2], p[0] + ". " + p[1] + "." + p[2]} {
		got, err := a.call(sa, "Runtime.callFunctionOn", map[string]any{"objectId": odd, "functionDeclaration": "function(s) { return this.id + s }", "arguments": []any{map[string]any{"value": "!"}}, "returnByValue": true})
		if err != nil || !strings.Contains(string(got), `"value":"btn!"`) {
			t.Fatalf("a call on object %q: %s %v, want Chrome's answer", odd, got, err)
		}
		got, err = a.call(sa, "Runtime.callFunctionOn", map[string]any{"objectId": odd, "functionDeclaration": "function() { for (;;) {} }"})
		if err != nil || !strings.Contains(string(got), "Target.createTarget") {
			t.Fatalf("a loop on object %q: %s %v, want the bound's exception", odd, got, err)
		}
	}
	if got := personClicks(t, id); got != "1" {
		t.Fatalf("the page counted %q clicks of the person's, want 1", got)
	}
}

// TestRedTeamCallWithEvaluateParams: the second step is a Runtime.evaluate
// and takes the call's other params as they came; evaluate's own params
// that callFunctionOn does not have (replMode, a longer timeout) do not
// lift the bound.
func TestRedTeamCallWithEvaluateParams(t *testing.T) {
	defer extcdp.SetSyncScriptBound(wedgeBound)()
	a, sa, id := wedgePerson(t, "call-evalparams")
	a.bound = personWaits
	btn := objectID(t, a.must(sa, "Runtime.evaluate", map[string]any{"expression": `document.getElementById("btn")`}))
	for _, extra := range []map[string]any{
		{"replMode": true},
		{"replMode": true, "awaitPromise": true},
		{"timeout": 600000},
		{"disableBreaks": true, "allowUnsafeEvalBlockedByCSP": true},
		{"contextId": 999},
	} {
		params := map[string]any{"objectId": btn, "functionDeclaration": "function() { for (;;) {} }"}
		for k, v := range extra {
			params[k] = v
		}
		got, err := a.call(sa, "Runtime.callFunctionOn", params)
		if err != nil && strings.Contains(err.Error(), "no reply") {
			t.Fatalf("a loop with %v: %v, want it bounded", extra, err)
		}
		t.Logf("%v: %.120s %v", extra, got, err)
	}
	if got := personClicks(t, id); got != "1" {
		t.Fatalf("the page counted %q clicks of the person's, want 1", got)
	}
}

// TestRedTeamWedgingRunScript: Runtime.compileScript then
// Runtime.runScript takes no timeout either; on the person's tab the relay
// runs the script it compiled as a bounded Runtime.evaluate.
func TestRedTeamWedgingRunScript(t *testing.T) {
	defer extcdp.SetSyncScriptBound(wedgeBound)()
	a, sa, id := wedgePerson(t, "run-script")
	a.bound = personWaits
	ctx := contextID(t, a, sa)
	compile := func(expr string) string {
		t.Helper()
		res := a.must(sa, "Runtime.compileScript", map[string]any{"expression": expr, "sourceURL": "livetab-test.js", "persistScript": true, "executionContextId": ctx})
		return field(res, "scriptId")
	}
	got, err := a.call(sa, "Runtime.runScript", map[string]any{"scriptId": compile("1 + 2"), "executionContextId": ctx, "returnByValue": true})
	if err != nil || !strings.Contains(string(got), `"value":3`) {
		t.Fatalf("a compiled script on the person's tab: %s %v", got, err)
	}
	got, err = a.call(sa, "Runtime.runScript", map[string]any{"scriptId": compile("for (;;) {}"), "executionContextId": ctx})
	if err != nil || !strings.Contains(string(got), "Target.createTarget") || !strings.Contains(string(got), "Runtime.runScript") {
		t.Fatalf("a compiled loop on the person's tab: %s %v, want the bound's exception", got, err)
	}
	if got := personClicks(t, id); got != "1" {
		t.Fatalf("the page counted %q clicks of the person's, want 1", got)
	}
	if _, err := a.call(sa, "Runtime.runScript", map[string]any{"scriptId": "999999", "executionContextId": ctx}); err == nil || !strings.Contains(err.Error(), "compileScript") {
		t.Fatalf("a script id livetab did not compile: %v, want a refusal that says to compile it on this session", err)
	}
}
