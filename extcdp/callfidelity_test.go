package extcdp_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/extcdp"
)

// callCase is one Runtime.callFunctionOn as a client sends it; setup gives
// the params on a session, so that object ids are that session's.
type callCase struct {
	name   string
	params func(a *rawClient, s string) map[string]any
	// stack: the answer holds a stack trace, which shows the relay's
	// frames on the person's tab (left as it is: see the decision).
	stack bool
	// want, when set, is what the person's answer must hold instead of
	// Chrome's exact answer.
	want string
}

// volatile are the parts of a Runtime answer that differ between two tabs
// for the same call: ids, and where the relay's frame shifts a stack.
var volatile = regexp.MustCompile(`"(objectId|scriptId|exceptionId|executionContextId|uniqueContextId|columnNumber|lineNumber|callFrames|stackTrace|url|functionName)":("[^"]*"|-?[0-9]+|\[[^\]]*\]|\{[^}]*\})`)

func normalize(s string) string { return volatile.ReplaceAllString(s, `"$1":_`) }

// TestCallFidelity: a call on the person's tab answers as Chrome's own
// callFunctionOn does on the client's own tab (forwarded unchanged).
func TestCallFidelity(t *testing.T) {
	defer extcdp.SetSyncScriptBound(wedgeBound)()
	a, sp, _ := wedgePerson(t, "fidelity")
	a.bound = personWaits
	_, so := a.open(site.URL + "/form?fidelity-own")
	a.eval(so, countClicks)
	obj := func(a *rawClient, s, expr string) string {
		return objectID(t, a.must(s, "Runtime.evaluate", map[string]any{"expression": expr}))
	}
	btn := func(a *rawClient, s string) string { return obj(a, s, `document.getElementById("btn")`) }
	cases := []callCase{
		{"rejected", func(a *rawClient, s string) map[string]any {
			return map[string]any{"objectId": btn(a, s), "functionDeclaration": "async function() { throw new Error('no') }", "awaitPromise": true}
		}, true, ""},
		{"rejected by value", func(a *rawClient, s string) map[string]any {
			return map[string]any{"objectId": btn(a, s), "functionDeclaration": "function() { return Promise.reject(7) }", "awaitPromise": true, "returnByValue": true}
		}, false, ""},
		{"not by value", func(a *rawClient, s string) map[string]any {
			return map[string]any{"objectId": btn(a, s), "functionDeclaration": "function() { const o = {}; o.o = o; return o }", "returnByValue": true}
		}, false, ""},
		{"function by value", func(a *rawClient, s string) map[string]any {
			return map[string]any{"objectId": btn(a, s), "functionDeclaration": "function() { return () => 1 }", "returnByValue": true}
		}, false, ""},
		{"deep", func(a *rawClient, s string) map[string]any {
			return map[string]any{"objectId": btn(a, s), "functionDeclaration": "function() { return {a: [1, this.id], d: new Date(0)} }", "serializationOptions": map[string]any{"serialization": "deep"}}
		}, false, ""},
		{"preview", func(a *rawClient, s string) map[string]any {
			return map[string]any{"objectId": btn(a, s), "functionDeclaration": "function() { return {a: 1, b: 'x'} }", "generatePreview": true}
		}, false, ""},
		{"gesture", func(a *rawClient, s string) map[string]any {
			return map[string]any{"objectId": btn(a, s), "functionDeclaration": "function() { return navigator.userActivation.isActive }", "userGesture": true, "returnByValue": true}
		}, false, ""},
		{"strict this without object", func(a *rawClient, s string) map[string]any {
			return map[string]any{"objectId": btn(a, s), "functionDeclaration": "function() { 'use strict'; return typeof this }", "returnByValue": true}
		}, false, ""},
		{"syntax error", func(a *rawClient, s string) map[string]any {
			return map[string]any{"objectId": btn(a, s), "functionDeclaration": "function( { ", "returnByValue": true}
		}, false, ""},
		{"comma", func(a *rawClient, s string) map[string]any {
			return map[string]any{"objectId": btn(a, s), "functionDeclaration": "function() { return 1 }, 5", "returnByValue": true}
		}, false, "does not evaluate to a function"},
		{"not a function", func(a *rawClient, s string) map[string]any {
			return map[string]any{"objectId": btn(a, s), "functionDeclaration": "42", "returnByValue": true}
		}, true, "does not evaluate to a function"},
		{"silent thrown", func(a *rawClient, s string) map[string]any {
			return map[string]any{"objectId": btn(a, s), "functionDeclaration": "function() { throw 3 }", "silent": true}
		}, false, ""},
		{"arguments length", func(a *rawClient, s string) map[string]any {
			return map[string]any{"objectId": btn(a, s), "functionDeclaration": "function() { return arguments.length + ':' + (new Error).stack.split('\\n').length }", "arguments": []any{map[string]any{}, map[string]any{"value": 1}}, "returnByValue": true}
		}, true, ""},
		{"isolated world", func(a *rawClient, s string) map[string]any {
			var ft struct {
				FrameTree struct {
					Frame struct {
						ID string `json:"id"`
					} `json:"frame"`
				} `json:"frameTree"`
			}
			unmarshal(a.must(s, "Page.getFrameTree", nil), &ft)
			var w struct {
				ID int64 `json:"executionContextId"`
			}
			unmarshal(a.must(s, "Page.createIsolatedWorld", map[string]any{"frameId": ft.FrameTree.Frame.ID, "worldName": "probe"}), &w)
			return map[string]any{"executionContextId": w.ID, "functionDeclaration": "function() { return [typeof window.livetabCount, document.title !== undefined, Object.getOwnPropertyNames(window).filter(n => n.includes('livetab')).length] }", "returnByValue": true}
		}, false, ""},
		{"unique context", func(a *rawClient, s string) map[string]any {
			return map[string]any{"uniqueContextId": uniqueContextID(t, a, s), "functionDeclaration": "function(x) { return [x, this === window] }", "arguments": []any{map[string]any{"value": 3}}, "returnByValue": true}
		}, false, ""},
		{"object group released", func(a *rawClient, s string) map[string]any {
			o := objectID(t, a.must(s, "Runtime.callFunctionOn", map[string]any{"objectId": btn(a, s), "functionDeclaration": "function() { return {g: 1} }", "objectGroup": "probe"}))
			a.must(s, "Runtime.releaseObjectGroup", map[string]any{"objectGroup": "probe"})
			return map[string]any{"objectId": o, "functionDeclaration": "function() { return this.g }", "returnByValue": true}
		}, false, ""},
		{"object group kept", func(a *rawClient, s string) map[string]any {
			o := objectID(t, a.must(s, "Runtime.callFunctionOn", map[string]any{"objectId": btn(a, s), "functionDeclaration": "function() { return {g: 1} }", "objectGroup": "probe2"}))
			a.must(s, "Runtime.releaseObjectGroup", map[string]any{"objectGroup": "other"})
			return map[string]any{"objectId": o, "functionDeclaration": "function() { return this.g }", "returnByValue": true}
		}, false, ""},
	}
	for _, c := range cases {
		var got [2]string
		for i, s := range []string{so, sp} {
			res, err := a.call(s, "Runtime.callFunctionOn", c.params(a, s))
			if err != nil {
				got[i] = "error: " + err.Error()
			} else {
				got[i] = normalize(string(res))
			}
		}
		t.Logf("%s\n  own:    %s\n  person: %s", c.name, got[0], got[1])
		switch {
		case c.want != "":
			if !strings.Contains(got[1], c.want) {
				t.Errorf("%s: the person's tab answered %s, want it to hold %q", c.name, got[1], c.want)
			}
		case c.stack:
		case got[0] != got[1]:
			t.Errorf("%s: the person's tab answered differently", c.name)
		}
	}
	left := a.must(sp, "Runtime.evaluate", map[string]any{"expression": `Object.getOwnPropertyNames(window).filter(n => n.includes("livetab")).join()`, "returnByValue": true})
	if !strings.Contains(string(left), `"value":""`) {
		t.Errorf("the person's global object holds %s after the calls (a syntax error's), want nothing of livetab's", left)
	}
}

// uniqueContextID is the uniqueId of the session's main world.
func uniqueContextID(t *testing.T, a *rawClient, s string) string {
	t.Helper()
	a.must(s, "Runtime.enable", nil)
	for range 50 {
		a.mu.Lock()
		evs := append([]rawMsg(nil), a.events...)
		a.mu.Unlock()
		for _, ev := range evs {
			var p struct {
				Context struct {
					UniqueID string `json:"uniqueId"`
					AuxData  struct {
						IsDefault bool `json:"isDefault"`
					} `json:"auxData"`
				} `json:"context"`
			}
			if ev.SessionID == s && ev.Method == "Runtime.executionContextCreated" && unmarshal(ev.Params, &p) == nil && p.Context.AuxData.IsDefault {
				return p.Context.UniqueID
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("no default execution context was announced")
	return ""
}

// TestCallInAPersonsFrame: a cross-origin iframe of the person's tab is
// another renderer, reached by a session of its own; a call there is as
// bounded, and answers as Chrome's, as one on the tab's page.
func TestCallInAPersonsFrame(t *testing.T) {
	defer extcdp.SetSyncScriptBound(wedgeBound)()
	srv, tok := endpoint(t)
	person := userTab(t, site.URL+"/frames?call")
	closeUserTab(t, person)
	a := dialRawTo(t, srv, tok)
	a.bound = personWaits
	sp := a.attach(person)
	a.eval(sp, "document.readyState == 'complete' || new Promise(ok => onload = ok)")
	a.must(sp, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
	var frame string
	for range 100 {
		for _, info := range targetInfos(t, a) {
			if info.Type == "iframe" && strings.HasPrefix(info.URL, site.CrossURL) {
				frame = info.TargetID
			}
		}
		if frame != "" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if frame == "" {
		t.Fatalf("the person's cross-origin iframe is not listed as a target: %+v", targetInfos(t, a))
	}
	sf := field(a.must("", "Target.attachToTarget", map[string]any{"targetId": frame, "flatten": true}), "sessionId")
	body := objectID(t, a.must(sf, "Runtime.evaluate", map[string]any{"expression": "document.body"}))
	got, err := a.call(sf, "Runtime.callFunctionOn", map[string]any{"objectId": body, "functionDeclaration": "function(s) { return location.origin + s + this.tagName }", "arguments": []any{map[string]any{"value": " "}}, "returnByValue": true})
	if want := `"value":"` + site.CrossURL + ` BODY"`; err != nil || !strings.Contains(string(got), want) {
		t.Fatalf("a call in the person's frame: %s %v, want %s", got, err, want)
	}
	start := time.Now()
	got, err = a.call(sf, "Runtime.callFunctionOn", map[string]any{"objectId": body, "functionDeclaration": "function() { for (;;) {} }"})
	t.Logf("a loop in the person's frame answered after %v", time.Since(start).Round(time.Millisecond))
	if err != nil || !strings.Contains(string(got), "Target.createTarget") {
		t.Fatalf("a loop in the person's frame: %s %v, want the bound's exception", got, err)
	}
	got, err = a.call(sf, "Runtime.evaluate", map[string]any{"expression": `Object.getOwnPropertyNames(window).filter(n => n.includes("livetab")).join()`, "returnByValue": true})
	if err != nil || !strings.Contains(string(got), `"value":""`) {
		t.Fatalf("the frame's global object after the calls: %s %v, want nothing of livetab's", got, err)
	}
}

// TestCallInAPersonsWorker: a dedicated worker of the person's tab,
// reached by its own session, runs a call as Chrome does and within the
// bound.
func TestCallInAPersonsWorker(t *testing.T) {
	defer extcdp.SetSyncScriptBound(wedgeBound)()
	a, sp, _ := wedgePerson(t, "call-worker")
	a.bound = personWaits
	a.must(sp, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
	a.eval(sp, `window.w = new Worker(URL.createObjectURL(new Blob(["self.n = 5"], {type: "text/javascript"}))), 1`)
	var sw string
	for range 100 {
		a.mu.Lock()
		for _, ev := range a.events {
			var p struct {
				SessionID  string `json:"sessionId"`
				TargetInfo struct {
					Type string `json:"type"`
				} `json:"targetInfo"`
			}
			if ev.Method == "Target.attachedToTarget" && unmarshal(ev.Params, &p) == nil && p.TargetInfo.Type == "worker" {
				sw = p.SessionID
			}
		}
		a.mu.Unlock()
		if sw != "" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if sw == "" {
		t.Fatal("no session on the person's worker")
	}
	var self string
	for range 50 {
		res, err := a.call(sw, "Runtime.evaluate", map[string]any{"expression": "self.n === 5 ? self : null"})
		if err == nil && strings.Contains(string(res), `"objectId"`) {
			self = objectID(t, res)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if self == "" {
		t.Fatal("the worker's global object was not there")
	}
	got, err := a.call(sw, "Runtime.callFunctionOn", map[string]any{"objectId": self, "functionDeclaration": "function(k) { return this.n + k }", "arguments": []any{map[string]any{"value": 2}}, "returnByValue": true})
	if err != nil || !strings.Contains(string(got), `"value":7`) {
		t.Fatalf("a call in the person's worker: %s %v", got, err)
	}
	start := time.Now()
	got, err = a.call(sw, "Runtime.callFunctionOn", map[string]any{"objectId": self, "functionDeclaration": "function() { for (;;) {} }"})
	t.Logf("a loop in the person's worker answered after %v", time.Since(start).Round(time.Millisecond))
	if err != nil || !strings.Contains(string(got), "Target.createTarget") {
		t.Fatalf("a loop in the person's worker: %s %v, want the bound's exception", got, err)
	}
	got, err = a.call(sw, "Runtime.evaluate", map[string]any{"expression": `Object.getOwnPropertyNames(self).filter(n => n.includes("livetab")).join()`, "returnByValue": true})
	if err != nil || !strings.Contains(string(got), `"value":""`) {
		t.Fatalf("the worker's global object after the calls: %s %v, want nothing of livetab's", got, err)
	}
}
