package extcdp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
	"github.com/livetab/livetab/policy"
)

// A script to evaluate on new documents (Playwright's addInitScript) runs
// in every document the tab's frames load from then on, before the page's
// own scripts, and before the relay hears of the commit that ends the
// session of a client held to domains: added on an allowed page, it ran in
// the person's bank when the tab went there, read it and sent it to the
// client's server (TestRedTeamNewDocumentScriptFollowsTheTabOutside,
// ...OnARedirectOutside). The relay cannot stop Chrome running it in time,
// so the script checks for itself where it is: for such a client the
// relay sends
//
//	if (<check>) {
//	<source>
//	}
//
// where the check, written from the client's domains, is true only in a
// document whose origin is within them (policy.MatchHost), or opaque. A
// source could close the block itself ("} steal(); if (0) {"); one that
// compiles on its own as a script cannot (it has the same tokens, in the
// same statement-start context), so the relay has Chrome compile it
// first (compilesAlone) and refuses a source that does not. The cost: one
// round trip per script (two where Runtime is off), and a top-level let, const, class (or async function, or
// generator) of the source is scoped to the block, not the document; a
// "use strict" at its top no longer makes it strict; it starts on the
// second line. docs/decisions/2026-11-25-a-client-reads-nothing-outside-its-domains.md.

// initScriptField names the source parameter of the commands that set a
// script to evaluate on new documents (Page.addScriptToEvaluateOnLoad is
// the deprecated spelling of the first).
var initScriptField = map[cdproto.MethodType]string{
	"Page.addScriptToEvaluateOnNewDocument": "source",
	"Page.addScriptToEvaluateOnLoad":        "scriptSource",
}

// initScriptTimeout bounds the compile of a client's source.
const initScriptTimeout = 10 * time.Second

// holdInitScript, for a client held to domains, turns the source of a
// script to evaluate on new documents into one that runs only in
// documents within the domains, rewriting m.Params; it refuses (answers)
// the command, and reports true, when the source does not compile as a
// script on its own, or the params cannot be read.
func (c *Client) holdInitScript(m *cdproto.Message, t *tab, sid string) bool {
	field := initScriptField[m.Method]
	if field == "" {
		return false
	}
	// Noted as it is read, in one hold of the lock with the domains: a
	// Livetab.setPolicy of the browser's lane may come between this and
	// the compile below (scriptsFor, and the check after the compile).
	c.r.mu.Lock()
	held := c.pol.set && len(c.pol.domains) > 0
	domains := c.pol.domains
	if !held {
		domains = nil
	}
	c.noteScriptsLocked(m.Params, field, domains)
	c.r.mu.Unlock()
	if !held {
		return false
	}
	refuse := func(why string) bool {
		c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab policy: %s refused: %s; a client held to domains (%s) has its new-document scripts checked, and runs them only in documents within its domains", m.Method, why, strings.Join(domains, ", ")))
		return true
	}
	// Read into a map and write it out again: the params Chrome gets are
	// the ones checked (no second "source" key that Chrome might read).
	var p map[string]jsonv2.Value
	if err := jsonv2.Unmarshal(m.Params, &p, wire.Options); err != nil || p == nil {
		return refuse("its params are not a JSON object")
	}
	var src string
	if raw, ok := p[field]; ok {
		if err := jsonv2.Unmarshal(raw, &src, wire.Options); err != nil {
			return refuse(field + " is not a string")
		}
	}
	if why := c.compilesAlone(t, sid, src); why != "" {
		return refuse("the script does not compile on its own (" + why + "; where the page forbids eval, turn Runtime on for this session, Runtime.enable, and add it again)")
	}
	c.r.mu.Lock()
	same := slices.Equal(c.pol.domains, domains) && c.pol.set
	c.r.mu.Unlock()
	if !same {
		return refuse("the client's domains changed while it was checked; add it again")
	}
	wrapped, _ := jsonv2.Marshal(heldInitScript(src, domains), wire.Options)
	p[field] = wrapped
	params, err := jsonv2.Marshal(p, wire.Options)
	if err != nil {
		return refuse(err.Error())
	}
	m.Params = params
	return false
}

// A script added before the client held itself to domains, or under
// others, runs unchecked, or checked against those (a policy set later
// did not reach it: TestRedTeamNewDocumentScriptBeforeThePolicy). The
// relay keeps under which domains the client's scripts were added, and
// setPolicy refuses other domains to a client that has some (scriptsFor).

// Keys of clientPolicy.scripts besides a list of domains.
const (
	scriptsUnheld = "\x00" // added with no domains
	scriptsMixed  = "\x01" // added under more than one
)

// noteScriptsLocked notes that c adds a script whose params are params,
// under domains (none: not held). A source with nothing but comments and
// spaces runs nothing: Playwright adds an empty one, Puppeteer one with a
// sourceURL comment, to have their worlds in each document. Call with r.mu
// held.
func (c *Client) noteScriptsLocked(params jsonv2.Value, field string, domains []string) {
	var p map[string]jsonv2.Value
	var src string
	if jsonv2.Unmarshal(params, &p, wire.Options) != nil || jsonv2.Unmarshal(p[field], &src, wire.Options) != nil || onlyComments(src) {
		return
	}
	key := scriptsUnheld
	if len(domains) > 0 {
		key = strings.Join(domains, "\n")
	}
	switch c.pol.scripts {
	case "":
		c.pol.scripts = key
	case key:
	default:
		c.pol.scripts = scriptsMixed
	}
}

// onlyComments reports whether src holds nothing but spaces, line
// comments and block comments.
func onlyComments(src string) bool {
	for {
		src = strings.TrimLeft(src, " \t\r\n")
		switch {
		case src == "":
			return true
		case strings.HasPrefix(src, "//"):
			_, rest, ok := strings.Cut(src, "\n")
			if !ok {
				return true
			}
			src = rest
		case strings.HasPrefix(src, "/*"):
			_, rest, ok := strings.Cut(src[2:], "*/")
			if !ok {
				return false
			}
			src = rest
		default:
			return false
		}
	}
}

// scriptsFor says why c may not hold itself to domains now: it added
// scripts for new documents under no or other domains. Call with r.mu
// held.
func (c *Client) scriptsFor(domains []string) string {
	if len(domains) == 0 || c.pol.scripts == "" || c.pol.scripts == strings.Join(domains, "\n") {
		return ""
	}
	if c.pol.scripts != scriptsUnheld && c.pol.scripts != scriptsMixed {
		// Wider domains hold every document the scripts' check lets in.
		wider := true
		for _, d := range strings.Split(c.pol.scripts, "\n") {
			wider = wider && slices.Contains(domains, d)
		}
		if wider {
			return ""
		}
	}
	return "this connection added scripts for new documents (Page.addScriptToEvaluateOnNewDocument) before it held itself to these domains, and those would run in documents outside them: set the policy before adding scripts, or hold a new connection to the domains"
}

// compilesAlone has Chrome compile src, without running it, as a script
// on its own, in the session's page, and returns why it does not ("" when
// it does): Runtime.compileScript, or where Runtime is not on for the
// attachment (compileScript needs it, and the relay does not turn it on
// behind its clients, whose execution contexts it tracks) the Function
// constructor in an isolated world of the frame, where the page's scripts
// change nothing. A function body parses on its own too (the constructor
// refuses "}); steal(); (function(){"), with the tokens of a script; it
// also allows a top-level return, which, in the wrapped script, is a
// syntax error that runs nothing. A page whose CSP forbids eval refuses
// the second way: the client turns Runtime on.
func (c *Client) compilesAlone(t *tab, sid, src string) string {
	r := c.r
	ctx, cancel := context.WithTimeout(c.ctx, initScriptTimeout)
	defer cancel()
	q, _ := jsonv2.Marshal(map[string]any{"expression": src, "sourceURL": "", "persistScript": false}, wire.Options)
	res, err := r.ask(ctx, t, sid, cdproto.CommandRuntimeCompileScript, q)
	if err != nil && strings.Contains(err.Error(), "not enabled") {
		r.mu.Lock()
		frame := t.targetID
		if sid != "" {
			frame = ""
			if ch := r.children[sid]; ch != nil && ch.tab == t {
				frame = ch.targetID
			}
		}
		r.mu.Unlock()
		q, _ = jsonv2.Marshal(map[string]any{"frameId": frame, "worldName": initScriptWorld}, wire.Options)
		if res, err = r.ask(ctx, t, sid, cdproto.CommandPageCreateIsolatedWorld, q); err == nil {
			var w struct {
				ID int64 `json:"executionContextId"`
			}
			jsonv2.Unmarshal(res, &w, wire.Options)
			q, _ = jsonv2.Marshal(map[string]any{
				"functionDeclaration": "function (s) { try { new Function(s); return 'compiles'; } catch (e) { return String(e); } }",
				"executionContextId":  w.ID, "arguments": []any{map[string]any{"value": src}}, "returnByValue": true,
			}, wire.Options)
			if res, err = r.ask(ctx, t, sid, cdproto.CommandRuntimeCallFunctionOn, q); err == nil {
				var v struct {
					Result struct {
						Value string `json:"value"`
					} `json:"result"`
				}
				jsonv2.Unmarshal(res, &v, wire.Options)
				switch v.Result.Value {
				case "compiles":
					return ""
				case "":
					return "no answer from the page"
				}
				return v.Result.Value
			}
		}
	}
	if err != nil {
		return err.Error()
	}
	var cr struct {
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception *struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := jsonv2.Unmarshal(res, &cr, wire.Options); err != nil {
		return err.Error()
	}
	if e := cr.ExceptionDetails; e != nil {
		if e.Exception != nil && e.Exception.Description != "" {
			return e.Exception.Description
		}
		return e.Text
	}
	return ""
}

// initScriptWorld is the isolated world in which compilesAlone compiles.
const initScriptWorld = "livetab-initscript-check"

// heldInitScript wraps src, which compiles as a script on its own, in the
// check that the document is within domains.
func heldInitScript(src string, domains []string) string {
	return "if (" + originCheck(domains) + ") {\n" + src + "\n}"
}

// originCheck returns a JavaScript expression that is true only in a
// document whose origin is opaque ("null": a data: URL, a sandboxed
// frame, which hold no site's data) or an http(s) origin whose host
// matches one of domains as policy.MatchHost does. It reads the origin of
// the document's environment (self.origin: about:blank and srcdoc
// documents have their creator's) and that of its URL (location.origin,
// which a page cannot replace: a sandboxed document of a site outside has
// an opaque self.origin), and both must pass. The host in an origin is the
// URL parser's canonical one (lower case, punycode, an IPv4 address
// dotted, an IPv6 one compressed in brackets): the check reads it with
// string indexing and comparisons only, no method a page could have
// replaced (it runs before the page's scripts in a new document anyway).
func originCheck(domains []string) string {
	var hosts, suffixes []string
	var addrs [][2]any
	anyHost := false
	for _, r := range policy.HostRules(domains) {
		switch {
		case r.Any:
			anyHost = true
		case r.Suffix != "":
			suffixes = append(suffixes, r.Suffix)
		case r.Host != "":
			hosts = append(hosts, r.Host)
		case r.Prefix.IsValid():
			a := r.Prefix.Addr().AsSlice()
			b := make([]int, len(a))
			for i, x := range a {
				b[i] = int(x)
			}
			addrs = append(addrs, [2]any{b, r.Prefix.Bits()})
		}
	}
	js := func(v any) string {
		if v == nil {
			return "[]"
		}
		b, _ := json.Marshal(v) // escapes U+2028/9; a JSON value is a JS one
		return string(b)
	}
	if hosts == nil {
		hosts = []string{}
	}
	if suffixes == nil {
		suffixes = []string{}
	}
	if addrs == nil {
		addrs = [][2]any{}
	}
	return strings.NewReplacer(
		"$ANY", strconv.FormatBool(anyHost),
		"$HOSTS", js(hosts),
		"$SUFFIXES", js(suffixes),
		"$ADDRS", js(addrs),
	).Replace(originCheckJS)
}

// originCheckJS is the check; the $ names are filled in by originCheck.
const originCheckJS = `((so, lo) => {
  const ANY = $ANY, HOSTS = $HOSTS, SUFFIXES = $SUFFIXES, ADDRS = $ADDRS;
  const starts = (s, p) => { if (s.length < p.length) return false; for (let i = 0; i < p.length; i++) if (s[i] !== p[i]) return false; return true; };
  const ends = (s, p) => { const k = s.length - p.length; if (k < 0) return false; for (let i = 0; i < p.length; i++) if (s[k + i] !== p[i]) return false; return true; };
  const digit = (c) => c >= "0" && c <= "9";
  const HEX = "0123456789abcdef", BAD = "/\\?#@:[]<>^|%\x7f";
  const hex = (c) => { for (let i = 0; i < 16; i++) if (HEX[i] === c) return i; return -1; };
  const bad = (c) => { if (c <= " ") return true; for (let i = 0; i < BAD.length; i++) if (BAD[i] === c) return true; return false; };
  const v4 = (h) => {
    const b = []; let n = 0, k = 0;
    for (let i = 0; i <= h.length; i++) {
      if (i === h.length || h[i] === ".") {
        if (k === 0 || k > 1 && h[i - k] === "0" || n > 255) return null;
        b[b.length] = n; n = 0; k = 0;
      } else if (digit(h[i]) && k < 3) { n = n * 10 + hex(h[i]); k++; } else return null;
    }
    return b.length === 4 ? b : null;
  };
  const v6 = (h) => {
    const g = []; let gap = -1, n = 0, k = 0;
    for (let i = 1; i < h.length - 1; i++) {
      const c = h[i];
      if (c === ":") {
        if (h[i + 1] === ":") { if (gap >= 0) return null; if (k > 0) g[g.length] = n; gap = g.length; n = 0; k = 0; i++; continue; }
        if (k === 0) return null;
        g[g.length] = n; n = 0; k = 0;
      } else { const x = hex(c); if (x < 0 || k === 4) return null; n = n * 16 + x; k++; }
    }
    if (k > 0) g[g.length] = n; else if (gap !== g.length) return null;
    if (gap < 0 ? g.length !== 8 : g.length > 7) return null;
    const w = [];
    for (let i = 0; i < g.length; i++) { if (i === gap) for (let j = g.length; j < 8; j++) w[w.length] = 0; w[w.length] = g[i]; }
    if (gap === g.length) for (let j = g.length; j < 8; j++) w[w.length] = 0;
    const b = [];
    for (let i = 0; i < 8; i++) { b[b.length] = w[i] >> 8; b[b.length] = w[i] & 255; }
    for (let i = 0; i < 10; i++) if (b[i] !== 0) return b;
    return b[10] === 255 && b[11] === 255 ? [b[12], b[13], b[14], b[15]] : b;
  };
  const inRange = (ip, a, bits) => {
    if (ip.length !== a.length) return false;
    for (let i = 0; i < a.length && bits > 0; i++, bits -= 8) {
      const m = bits >= 8 ? 255 : (65280 >> bits) & 255;
      if ((ip[i] & m) !== (a[i] & m)) return false;
    }
    return true;
  };
  const host = (h) => {
    let ip = null;
    if (h[0] === "[") {
      if (h[h.length - 1] !== "]" || (ip = v6(h)) === null) return false;
    } else {
      if (ends(h, ".")) { let t = ""; for (let i = 0; i < h.length - 1; i++) t += h[i]; h = t; }
      if (h === "" || h[0] === "." || h[h.length - 1] === ".") return false;
      let last = 0;
      for (let i = 0; i < h.length; i++) {
        const c = h[i];
        if (bad(c) || c === "." && h[i + 1] === ".") return false;
        if (c === ".") last = i + 1;
      }
      let num = last < h.length, hx = h[last] === "0" && h[last + 1] === "x";
      for (let i = last; i < h.length; i++) { if (!digit(h[i])) num = false; if (i >= last + 2 && hex(h[i]) < 0) hx = false; }
      if (num || hx) { if ((ip = v4(h)) === null) return false; }
    }
    if (ANY) return true;
    if (ip === null) {
      for (let i = 0; i < HOSTS.length; i++) if (h === HOSTS[i]) return true;
      for (let i = 0; i < SUFFIXES.length; i++) if (ends(h, SUFFIXES[i])) return true;
      return false;
    }
    for (let i = 0; i < ADDRS.length; i++) if (inRange(ip, ADDRS[i][0], ADDRS[i][1])) return true;
    return false;
  };
  const ok = (o) => {
    if (o === "null") return true;
    if (typeof o !== "string") return false;
    let i;
    if (starts(o, "https://")) i = 8; else if (starts(o, "http://")) i = 7; else return false;
    let h = "";
    if (o[i] === "[") { for (; i < o.length && o[i] !== "]"; i++) h += o[i]; if (i === o.length) return false; h += "]"; }
    else for (; i < o.length && o[i] !== ":"; i++) h += o[i];
    return host(h);
  };
  // An opaque document (a sandboxed or data: frame) holds what the page
  // that made it put there: each of its ancestors must pass too.
  const anc = lo === "null" || so === "null" ? location.ancestorOrigins : null;
  for (let i = 0; anc && i < anc.length; i++) if (!ok(anc[i])) return false;
  return ok(so) && ok(lo);
})(self.origin, location.origin)`
