package extcdp

import (
	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
)

// Bindings on a shared tab. On Chrome a binding (Runtime.addBinding:
// Playwright's exposeBinding, Puppeteer's exposeFunction) is its
// session's: only that session hears the page call it, and another's
// removeBinding leaves it. Through one shared attachment B heard A's calls
// with A's payloads, and B's removeBinding of A's name stopped A hearing
// its own (red team). So the relay notes which clients added each name on
// a tab, tells a call only to them, and a removal by one while another
// still holds the name is answered and not sent.

// bindingName reads the name of a binding command's or event's params.
func bindingName(params jsonv2.Value) (string, bool) {
	var p struct {
		Name string `json:"name"`
	}
	if jsonv2.Unmarshal(params, &p, wire.Options) != nil || p.Name == "" {
		return "", false
	}
	return p.Name, true
}

// noteBinding returns the hook that notes c's binding once Chrome added
// it; for a removal of a name another client holds, it answers m and
// reports true. Call without r.mu.
func (c *Client) noteBinding(m *cdproto.Message, t *tab) (hook func(), answered bool) {
	if m.Method != cdproto.CommandRuntimeAddBinding && m.Method != cdproto.CommandRuntimeRemoveBinding {
		return nil, false
	}
	name, ok := bindingName(m.Params)
	if !ok {
		return nil, false
	}
	r := c.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if m.Method == cdproto.CommandRuntimeRemoveBinding {
		holders := t.bindings[name]
		delete(holders, c)
		if len(holders) > 0 {
			c.reply(m.ID, m.SessionID, nil)
			return nil, true
		}
		delete(t.bindings, name)
		return nil, false
	}
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if t.bindings == nil {
			t.bindings = map[string]map[*Client]bool{}
		}
		if t.bindings[name] == nil {
			t.bindings[name] = map[*Client]bool{}
		}
		t.bindings[name][c] = true
	}, false
}

// bindingHolders are the clients a Runtime.bindingCalled of t goes to;
// nil for any other event, or a name no client is noted for (every client
// hears it, as before). Call with r.mu held.
func bindingHolders(t *tab, method cdproto.MethodType, params jsonv2.Value) map[*Client]bool {
	if method != cdproto.EventRuntimeBindingCalled {
		return nil
	}
	name, ok := bindingName(params)
	if !ok {
		return nil
	}
	return t.bindings[name]
}

// dropBindings forgets c as a holder of t's bindings, now that it left the
// tab. A name no client holds any more is removed from the page when send
// (other clients stay, and with them the attachment): Chrome removes a
// session's bindings with the session, but the shared attachment kept each
// dead client's binding on the person's page, and its name in the relay
// (TestRedTeamDeadClientsBindingsStay). A reattach does not add it again.
// Call with r.mu held.
func (r *Relay) dropBindings(t *tab, c *Client, send bool) {
	for name, holders := range t.bindings {
		if !holders[c] {
			continue
		}
		delete(holders, c)
		if len(holders) > 0 {
			continue
		}
		delete(t.bindings, name)
		if !send || !t.attached {
			continue
		}
		params, _ := jsonv2.Marshal(map[string]string{"name": name}, wire.Options)
		t.noteSetup(string(cdproto.CommandRuntimeRemoveBinding), params)
		// On every attachment of the tab: the name may have been added
		// on a frame's.
		r.unbind(t, "", params, name, t.runtime.list)
		for _, ch := range r.children {
			if ch.tab == t {
				r.unbind(t, ch.sid, params, name, ch.runtime.list)
			}
		}
	}
}

// unbind removes the binding name from the attachment sid of t. Chrome's
// Runtime.removeBinding only stops the calls being told: the function stays
// on the page's global objects, so it is deleted there too, in the default
// context and in each one the relay knows, if it is still the binding (a
// native function). Call with r.mu held.
func (r *Relay) unbind(t *tab, sid string, params jsonv2.Value, name string, contexts []execContext) {
	r.sendOwed(&wire.Frame{Method: string(cdproto.CommandRuntimeRemoveBinding), Params: params, TabID: t.id, SessionID: sid})
	const del = `function(n) { const f = globalThis[n]; if (typeof f === "function" && /\{\s*\[native code\]\s*\}$/.test(Function.prototype.toString.call(f))) delete globalThis[n]; }`
	quoted, _ := jsonv2.Marshal(name, wire.Options)
	eval, _ := jsonv2.Marshal(map[string]any{"expression": "(" + del + ")(" + string(quoted) + ")", "silent": true}, wire.Options)
	r.sendOwed(&wire.Frame{Method: string(cdproto.CommandRuntimeEvaluate), Params: eval, TabID: t.id, SessionID: sid})
	for _, ec := range contexts {
		call, _ := jsonv2.Marshal(map[string]any{"functionDeclaration": del, "executionContextId": ec.id, "arguments": []map[string]string{{"value": name}}, "silent": true}, wire.Options)
		r.sendOwed(&wire.Frame{Method: string(cdproto.CommandRuntimeCallFunctionOn), Params: call, TabID: t.id, SessionID: sid})
	}
}
