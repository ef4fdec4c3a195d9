package extcdp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
)

// A client's script that never yields (while(true){}) holds the main
// thread of the person's tab: Chrome answers nothing there, the person can
// neither click nor type, and the loop outlived the client that sent it
// (TestRedTeamWedgedTabOutlivesNoClient). Chrome refuses
// Runtime.terminateExecution to an extension's debugger ("not allowed for
// untrusted clients"), and Debugger.pause needs the Debugger domain on
// before the script starts; what it does give is Runtime.evaluate's own
// timeout, which ends that evaluation's synchronous part and nothing else
// (V8 takes the termination back when the evaluation returns, so it never
// reaches the page's next script, and an awaited promise is not bounded).
// So on a tab the client did not open every Runtime.evaluate carries a
// timeout of at most syncScriptBound.
// docs/decisions/2026-11-27-a-script-does-not-wedge-the-persons-tab.md.

// syncScriptBound is how long a client's Runtime.evaluate may run without
// yielding on a tab the person opened.
var syncScriptBound atomic.Int64

func init() { syncScriptBound.Store(int64(10 * time.Second)) }

// terminatedMessage is what Chrome answers for an evaluation its timeout
// ended.
const terminatedMessage = "Execution was terminated"

// internalErrorMessage is what Chrome answers instead for an evaluation
// with awaitPromise that its timeout ended.
const internalErrorMessage = "Internal error"

// boundScript gives a Runtime.evaluate on t, when t is not c's own, a
// timeout of at most syncScriptBound. It returns the params to send and the
// bound it set (0 when the client's own timeout is the shorter, or t is
// c's own).
func (c *Client) boundScript(t *tab, params jsonv2.Value) (jsonv2.Value, time.Duration, error) {
	if c.opened(t) {
		return params, 0, nil
	}
	bound := time.Duration(syncScriptBound.Load())
	p := map[string]jsonv2.Value{}
	if len(params) > 0 {
		if err := jsonv2.Unmarshal(params, &p, wire.Options); err != nil {
			return nil, 0, fmt.Errorf("livetab: invalid Runtime.evaluate params: %w", err)
		}
	}
	if v, ok := p["timeout"]; ok {
		ms, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return nil, 0, fmt.Errorf("livetab: invalid Runtime.evaluate timeout %s: want milliseconds", v)
		}
		if ms <= float64(bound.Milliseconds()) {
			return params, 0, nil
		}
	}
	p["timeout"] = jsonv2.Value(strconv.FormatInt(bound.Milliseconds(), 10))
	out, err := jsonv2.Marshal(p, wire.Options)
	if err != nil {
		return nil, 0, fmt.Errorf("livetab: encoding Runtime.evaluate params: %w", err)
	}
	return out, bound, nil
}

// scriptEnded says why the relay's bound ended a client's script, and
// what to do, as the exception the script threw: Playwright shows no
// protocol error of an evaluation ("Execution context was destroyed"), but
// every client shows an exception's message.
func scriptEnded(method cdproto.MethodType, t *tab, bound time.Duration) jsonv2.Value {
	msg := fmt.Sprintf("livetab: %s ran its script for %v without yielding on tab %d, which the person opened, so livetab ended it (%s): the person's tab answers nothing while a script runs; yield in between (await a promise with awaitPromise), or run long work in a tab of your own (Target.createTarget)", method, bound, t.id, terminatedMessage)
	thrown := map[string]any{"type": "object", "subtype": "error", "className": "Error", "description": "Error: " + msg}
	out, _ := jsonv2.Marshal(map[string]any{
		"result":           thrown,
		"exceptionDetails": map[string]any{"exceptionId": 0, "text": "Uncaught", "lineNumber": 0, "columnNumber": 0, "exception": thrown},
	}, wire.Options)
	return out
}

// Runtime.callFunctionOn (Puppeteer's and Playwright's page.evaluate(fn))
// takes no timeout. On a tab the client did not open, the relay runs it in
// two steps: a fixed function of its own, called as the client asked (the
// same object, arguments and world), keeps this and the arguments under a
// fresh name on the world's global object, and returns at once; then a
// Runtime.evaluate with the bound compiles the client's function and calls
// it through what was kept, which it removes first. The client's function
// is compiled at the top level of a script, as Chrome's own callFunctionOn
// does, so an arrow function's this is the global object and no name of the
// relay's is in its scope. A stack trace shows one frame more. Measured:
// one round trip more, about 1 ms.

// callKeeper is the function of the first step; %q is the name it keeps
// the call under. Sloppy, so that an inner function's this is the world's
// global object, which a page cannot replace as it can the globalThis
// property; its own this is the object as given (Chrome passes the global
// object when no object is named).
//
// %s is where the kept call removes itself; a call with throwOnSideEffect
// cannot (the removal is a side effect V8 refuses), and is removed after.
const callKeeper = `function() {
	var self = this, args = arguments, global = (function() { return this })(), name = %q;
	global[name] = function(fn) {
		%s
		if (typeof fn !== "function") throw new TypeError("Given expression does not evaluate to a function");
		return Reflect.apply(fn, self, args);
	};
}`

// callRunner is the expression of the second step: the kept call, applied
// to the client's function. The line break lets the function end in a
// line comment (Puppeteer's //# sourceURL=); the inner parentheses make a
// declaration with a comma one value, as Chrome's own "(" + declaration +
// ")" does, so "function() {}, 5" is not a function there either.
const callRunner = "this[%q]((%s\n))"

// callLeft is what removes a kept call that the second step did not take:
// a declaration that does not compile (a syntax error) ends the script
// before it runs, and the page would keep the name on its global object.
const callLeft = "delete this[%q]"

// callOnlyParams are callFunctionOn's parameters that Runtime.evaluate
// does not take; the others mean the same there.
var callOnlyParams = map[string]bool{"functionDeclaration": true, "objectId": true, "arguments": true, "executionContextId": true}

// boundCall turns a Runtime.callFunctionOn on t, when t is not c's own,
// into the two steps above, running the first. It returns the method and
// params to send and the bound set; the call as it came and no bound where
// the steps do not apply (the client's own tab, or no world to run in):
// then the call runs unbounded, as before. An error is Chrome's answer to
// the first step (an object of another world, say), or the refusal of a
// call the page kept the first step from, for the client.
//
// after, when not nil, is to be given the reply of the second step: on an
// exception or an error it removes the kept call in the background, should
// the script not have run.
func (c *Client) boundCall(t *tab, sid string, params jsonv2.Value) (method cdproto.MethodType, out jsonv2.Value, bound time.Duration, after func(*wire.Frame), err error) {
	as := func() (cdproto.MethodType, jsonv2.Value, time.Duration, func(*wire.Frame), error) {
		return cdproto.CommandRuntimeCallFunctionOn, params, 0, nil, nil
	}
	if c.opened(t) {
		return as()
	}
	p := map[string]jsonv2.Value{}
	if err := jsonv2.Unmarshal(params, &p, wire.Options); err != nil {
		return as() // Chrome says what is wrong with it
	}
	var decl string
	if jsonv2.Unmarshal(p["functionDeclaration"], &decl, wire.Options) != nil {
		return as()
	}
	// A loop writes nothing, so throwOnSideEffect does not bound it: the
	// call takes the same two steps, the second with throwOnSideEffect.
	var pure bool
	if v, ok := p["throwOnSideEffect"]; ok && jsonv2.Unmarshal(v, &pure, wire.Options) != nil {
		return as() // Chrome says what is wrong with it
	}
	remove := "delete global[name];"
	if pure {
		remove = ""
	}
	run := map[string]jsonv2.Value{}
	for k, v := range p {
		if !callOnlyParams[k] {
			run[k] = v
		}
	}
	switch {
	case p["uniqueContextId"] != nil:
	case p["executionContextId"] != nil:
		run["contextId"] = p["executionContextId"]
	case p["objectId"] != nil:
		// V8's object ids are "isolate.context.object".
		var id string
		if jsonv2.Unmarshal(p["objectId"], &id, wire.Options) != nil {
			return as()
		}
		// V8 reads the numbers as strtol does ("+1", "01", " 1" are 1),
		// so the relay does too and names the world in plain digits; an
		// id it cannot read is refused, not run unbounded.
		parts := strings.Split(id, ".")
		if len(parts) != 3 {
			return as() // "Invalid remote object id"
		}
		n, err := strconv.ParseInt(strings.TrimLeft(parts[1], " \t\n\v\f\r"), 10, 64)
		if err != nil {
			return "", nil, 0, nil, &cdproto.Error{Code: -32000, Message: "Invalid remote object id"}
		}
		run["contextId"] = jsonv2.Value(strconv.FormatInt(n, 10))
	default:
		return as()
	}
	var nonce [12]byte
	rand.Read(nonce[:])
	name := "livetab call " + hex.EncodeToString(nonce[:])
	keep := map[string]jsonv2.Value{}
	for _, k := range []string{"objectId", "arguments", "executionContextId", "uniqueContextId"} {
		if v, ok := p[k]; ok {
			keep[k] = v
		}
	}
	fn, _ := jsonv2.Marshal(fmt.Sprintf(callKeeper, name, remove), wire.Options)
	keep["functionDeclaration"] = fn
	keep["silent"] = jsonv2.Value("true")
	keep["returnByValue"] = jsonv2.Value("true")
	raw, err := jsonv2.Marshal(keep, wire.Options)
	if err != nil {
		return as()
	}
	type result struct {
		v   jsonv2.Value
		err error
	}
	ch := make(chan result, 1)
	c.tabCall(t, sid, cdproto.CommandRuntimeCallFunctionOn, raw, func(v jsonv2.Value, err error) { ch <- result{v, err} })
	kept := <-ch
	if kept.err != nil {
		return "", nil, 0, nil, kept.err
	}
	var threw struct {
		ExceptionDetails jsonv2.Value `json:"exceptionDetails"`
	}
	if jsonv2.Unmarshal(kept.v, &threw, wire.Options) != nil || threw.ExceptionDetails != nil {
		// Only the page can make the relay's own function throw (a
		// setter on the global object's prototypes): unbounded, the call
		// could hold the person's tab for good, so it is not sent.
		return "", nil, 0, nil, fmt.Errorf("livetab: Runtime.callFunctionOn on tab %d, which the person opened, cannot be bounded: the page's global object refused what livetab keeps there for the call; run it with Runtime.evaluate, or in a tab of your own (Target.createTarget)", t.id)
	}
	bound = time.Duration(syncScriptBound.Load())
	expr, _ := jsonv2.Marshal(fmt.Sprintf(callRunner, name, decl), wire.Options)
	run["expression"] = expr
	run["timeout"] = jsonv2.Value(strconv.FormatInt(bound.Milliseconds(), 10))
	out, err = jsonv2.Marshal(run, wire.Options)
	if err != nil {
		return as()
	}
	left := map[string]jsonv2.Value{"silent": jsonv2.Value("true"), "timeout": jsonv2.Value("1000")}
	left["expression"], _ = jsonv2.Marshal(fmt.Sprintf(callLeft, name), wire.Options)
	for _, k := range []string{"contextId", "uniqueContextId"} {
		if v, ok := run[k]; ok {
			left[k] = v
		}
	}
	forget, _ := jsonv2.Marshal(left, wire.Options)
	after = func(rep *wire.Frame) {
		if !pure && rep != nil && rep.Error == nil && !strings.Contains(string(rep.Result), `"exceptionDetails"`) {
			return // the script ran, and took the kept call first
		}
		// Not the client's context: a client that left with its call on
		// the way leaves nothing on the page either.
		ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
		f := &wire.Frame{Method: string(cdproto.CommandRuntimeEvaluate), Params: forget, TabID: t.id, SessionID: sid}
		if c.r.b.Go(ctx, f, func(*wire.Frame, error) { cancel() }) != nil {
			cancel()
		}
	}
	return cdproto.CommandRuntimeEvaluate, out, bound, after, nil
}

// Runtime.runScript takes no timeout either. On a tab the client did not
// open, the relay keeps the expression of each script the client compiled
// there (Runtime.compileScript with persistScript) and runs it as a bounded
// Runtime.evaluate; a script id it did not see compiled is refused, as it
// could run unbounded.

// maxKeptScripts and maxKeptScriptBytes bound what a client's compiled
// scripts hold in the relay: the oldest go first.
const (
	maxKeptScripts     = 256
	maxKeptScriptBytes = 32 << 20
)

// keptScripts are the expressions of a client's compiled scripts on tabs
// it did not open, by session and script id.
type keptScripts struct {
	mu    sync.Mutex
	expr  map[string]string
	order []string
	bytes int
}

func (k *keptScripts) put(t *tab, sid, scriptID, expr string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.expr == nil {
		k.expr = map[string]string{}
	}
	key := scriptKey(t, sid, scriptID)
	if old, ok := k.expr[key]; ok {
		k.bytes -= len(old)
	} else {
		k.order = append(k.order, key)
	}
	k.expr[key] = expr
	k.bytes += len(expr)
	for len(k.order) > 0 && (len(k.order) > maxKeptScripts || k.bytes > maxKeptScriptBytes) {
		k.bytes -= len(k.expr[k.order[0]])
		delete(k.expr, k.order[0])
		k.order = k.order[1:]
	}
}

func (k *keptScripts) get(t *tab, sid, scriptID string) (string, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	e, ok := k.expr[scriptKey(t, sid, scriptID)]
	return e, ok
}

// scriptKey names a script: ids are V8's, per renderer, so the same id on
// another tab or frame is another script.
func scriptKey(t *tab, sid, scriptID string) string {
	return strconv.FormatInt(t.id, 10) + "\x00" + sid + "\x00" + scriptID
}

// noteCompile returns, for a Runtime.compileScript on t when t is not c's
// own, the hook that keeps the compiled expression under the script id of
// the reply; nil otherwise.
func (c *Client) noteCompile(t *tab, sid string, params jsonv2.Value) func(jsonv2.Value) {
	if c.opened(t) {
		return nil
	}
	var p struct {
		Expression    string `json:"expression"`
		SourceURL     string `json:"sourceURL"`
		PersistScript bool   `json:"persistScript"`
	}
	if jsonv2.Unmarshal(params, &p, wire.Options) != nil || !p.PersistScript {
		return nil
	}
	expr := p.Expression
	if p.SourceURL != "" && !strings.ContainsAny(p.SourceURL, "\r\n") {
		expr += "\n//# sourceURL=" + p.SourceURL
	}
	return func(result jsonv2.Value) {
		var r struct {
			ScriptID string `json:"scriptId"`
		}
		if jsonv2.Unmarshal(result, &r, wire.Options) == nil && r.ScriptID != "" {
			c.scripts.put(t, sid, r.ScriptID, expr)
		}
	}
}

// boundRun turns a Runtime.runScript on t, when t is not c's own, into a
// Runtime.evaluate of the script's kept expression with the bound.
func (c *Client) boundRun(t *tab, sid string, params jsonv2.Value) (cdproto.MethodType, jsonv2.Value, time.Duration, error) {
	if c.opened(t) {
		return cdproto.CommandRuntimeRunScript, params, 0, nil
	}
	p := map[string]jsonv2.Value{}
	if err := jsonv2.Unmarshal(params, &p, wire.Options); err != nil {
		return "", nil, 0, fmt.Errorf("livetab: invalid Runtime.runScript params: %w", err)
	}
	var id string
	jsonv2.Unmarshal(p["scriptId"], &id, wire.Options)
	expr, ok := c.scripts.get(t, sid, id)
	if !ok {
		return "", nil, 0, fmt.Errorf("livetab refuses Runtime.runScript of script %q on tab %d, which the person opened: livetab runs there only a script it saw compiled on this session (Runtime.compileScript with persistScript), so that it can end one that never yields; compile it again, or use Runtime.evaluate", id, t.id)
	}
	run := map[string]jsonv2.Value{}
	for k, v := range p {
		switch k {
		case "scriptId":
		case "executionContextId":
			run["contextId"] = v
		default:
			run[k] = v
		}
	}
	bound := time.Duration(syncScriptBound.Load())
	e, _ := jsonv2.Marshal(expr, wire.Options)
	run["expression"] = e
	run["timeout"] = jsonv2.Value(strconv.FormatInt(bound.Milliseconds(), 10))
	out, err := jsonv2.Marshal(run, wire.Options)
	if err != nil {
		return "", nil, 0, fmt.Errorf("livetab: encoding Runtime.runScript as an evaluation: %w", err)
	}
	return cdproto.CommandRuntimeEvaluate, out, bound, nil
}

// A page can make its whole tab undebuggable by giving one of its frames a
// URL an extension may not debug: chrome.debugger checks every frame's URL
// before every command of the tab, and a srcdoc frame whose page set
// location.hash = 'x' shows about:srcdoc#x, which fails that check (red
// team: every command of every client refused with "Cannot access contents
// of url …, Extension manifest must request permission to access this
// host", until the frame navigates, is removed, or the tab reloads). No
// command can undo it, since each is refused, so the relay says what
// happened and what still works, instead of Chrome's words about the
// manifest. docs/decisions/2026-11-23-chrome-debugger-inputs-emulated-or-refused.md.

// frameURLRefused rewrites Chrome's refusal of a command on t because a
// frame of t shows a URL extensions may not debug. top is t's page URL, ""
// when unknown (then Chrome's words stay: the page itself may be the one
// refused). The frame's URL is named without its query or fragment, which
// the page chose; Chrome's own words are not repeated.
func frameURLRefused(t *tab, top string, e *cdproto.Error) *cdproto.Error {
	const pre, ext = `Cannot access contents of url "`, "Cannot access a chrome-extension:// URL of different extension"
	if top == "" {
		return e
	}
	var what string
	switch i := strings.Index(e.Message, pre); {
	case i >= 0:
		u, _, ok := strings.Cut(e.Message[i+len(pre):], `"`)
		if !ok || u == top {
			return e
		}
		bare, _, _ := strings.Cut(u, "#")
		bare, _, _ = strings.Cut(bare, "?")
		if len(bare) > 100 {
			bare = bare[:100] + "…"
		}
		what = fmt.Sprintf("a URL no extension may debug (%s", bare)
		if bare != u {
			what += " with a query or fragment"
		}
		what += ")"
	case strings.Contains(e.Message, ext) && !strings.HasPrefix(top, "chrome-extension:"):
		what = "a page of another extension"
	default:
		return e
	}
	return &cdproto.Error{Code: e.Code, Message: fmt.Sprintf(
		"livetab: Chrome refuses every command on tab %d while a frame of its page shows %s, which the page put there; "+
			"the tab answers again once that frame navigates or is removed: close the tab (Target.closeTarget, or your tool that closes tabs) if your program opened it, or ask the person to reload it",
		t.id, what)}
}
