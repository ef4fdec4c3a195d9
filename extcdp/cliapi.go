package extcdp

import (
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
)

// Chrome gives the DevTools command-line API ($, $$, $x, keys, values…) to
// Runtime.evaluate{includeCommandLineAPI: true} of trusted clients only: an
// extension's chrome.debugger session gets the flag ignored, and
// `$x("//h1")` throws "ReferenceError: $x is not defined". chromedp's
// EvaluateAsDevTools sets the flag. The relay gives the expression the
// same names, defined in the page, in a scope of its own: a with statement
// around the expression keeps its completion value (what Runtime.evaluate
// returns) and its global declarations, as DevTools' scope does. A name
// the page defines itself wins over DevTools' there; here, too.
//
// Not emulated: $0–$4 and $_ (DevTools' selection and last result),
// inspect, monitor, debug, getEventListeners, queryObjects.
const commandLineAPI = `(() => {
  const api = {
    $: (s, n) => (n || document).querySelector(s),
    $$: (s, n) => Array.from((n || document).querySelectorAll(s)),
    $x: (p, n) => {
      const r = document.evaluate(p, n || document, null, XPathResult.ANY_TYPE, null);
      switch (r.resultType) {
        case XPathResult.NUMBER_TYPE: return r.numberValue;
        case XPathResult.STRING_TYPE: return r.stringValue;
        case XPathResult.BOOLEAN_TYPE: return r.booleanValue;
      }
      const out = [];
      for (let x = r.iterateNext(); x; x = r.iterateNext()) out.push(x);
      return out;
    },
    keys: (o) => Object.keys(o),
    values: (o) => Object.values(o),
    dir: (...a) => console.dir(...a),
    dirxml: (...a) => console.dirxml(...a),
    table: (...a) => console.table(...a),
    clear: () => console.clear(),
    copy: () => {},
  };
  return new Proxy(api, { has: (o, k) => Object.hasOwn(o, k) && !(k in globalThis) });
})()`

// withCommandLineAPI rewrites the params of a Runtime.evaluate that asks
// for the command-line API so that the expression has it. Params it cannot
// read are returned as they are, for Chrome to judge.
func withCommandLineAPI(params jsonv2.Value) jsonv2.Value {
	var p map[string]jsonv2.Value
	if len(params) == 0 || jsonv2.Unmarshal(params, &p, wire.Options) != nil {
		return params
	}
	var on bool
	var expr string
	if jsonv2.Unmarshal(p["includeCommandLineAPI"], &on, wire.Options) != nil || !on ||
		jsonv2.Unmarshal(p["expression"], &expr, wire.Options) != nil {
		return params
	}
	// The newline ends a // comment on the expression's last line.
	wrapped, err := jsonv2.Marshal("with ("+commandLineAPI+") {\n"+expr+"\n}", wire.Options)
	if err != nil {
		return params
	}
	p["expression"] = wrapped
	delete(p, "includeCommandLineAPI")
	out, err := jsonv2.Marshal(p, wire.Options)
	if err != nil {
		return params
	}
	return out
}
