package extcdp

import (
	"fmt"
	"strings"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"

	"github.com/livetab/livetab/internal/wire"
)

// Chrome gives extensions some CDP domains only: through chrome.debugger,
// Profiler, HeapProfiler, Memory, Security, LayerTree, Animation,
// ServiceWorker, Media, Preload, SystemInfo and others answer "'X' wasn't
// found" (measured, TestClientsCompat). A client read that as a missing
// feature of livetab's, with no way on: Playwright's page.coverage failed
// so. The relay says why and, where there is one, what to use instead.

// withheldHints name what to use instead of a domain Chrome withholds.
var withheldHints = map[string]string{
	"Profiler":     "JS coverage (page.coverage) and CPU profiles need it; measure with Tracing (Playwright's context.tracing, Puppeteer's page.tracing) or Performance.getMetrics",
	"HeapProfiler": "heap snapshots need it; read the page's memory with Runtime.evaluate of performance.memory, or Performance.getMetrics",
	"Memory":       "read the page's memory with Performance.getMetrics",
	"Security":     "the person's Chrome checks certificates as it always does for them",
}

// withheld explains Chrome's method-not-found answer to m, keeping
// Chrome's words first; other errors pass unchanged.
func withheld(method cdproto.MethodType, e *cdproto.Error) *cdproto.Error {
	if e == nil || e.Code != -32601 || !strings.HasSuffix(e.Message, "wasn't found") {
		return e
	}
	domain, _, _ := strings.Cut(string(method), ".")
	msg := fmt.Sprintf("%s: Chrome does not give extensions (chrome.debugger) this method of the %s domain, so livetab cannot reach it", e.Message, domain)
	if hint := withheldHints[domain]; hint != "" {
		msg += "; " + hint
	}
	return &cdproto.Error{Code: e.Code, Message: msg}
}

// ignoreCertificateErrors answers Security.setIgnoreCertificateErrors, on
// a tab's session or the browser's, and reports whether m was one.
// Playwright's newContext({ignoreHTTPSErrors}) sends it for each page it
// sets up, Puppeteer's connect({acceptInsecureCerts}) at the browser level:
// Chrome's "wasn't found" failed the page or the connection with no word
// of why. Not ignoring is what the person's Chrome does anyway; ignoring
// it cannot do.
func (c *Client) ignoreCertificateErrors(m *cdproto.Message, sid target.SessionID) bool {
	if m.Method != "Security.setIgnoreCertificateErrors" {
		return false
	}
	var p struct {
		Ignore bool `json:"ignore"`
	}
	if err := jsonv2.Unmarshal(m.Params, &p, wire.Options); err != nil {
		c.fail(m.ID, sid, -32602, fmt.Sprintf("livetab: invalid %s params: %v", m.Method, err))
		return true
	}
	if !p.Ignore {
		c.reply(m.ID, sid, nil)
		return true
	}
	c.fail(m.ID, sid, -32000, "livetab cannot ignore certificate errors: Chrome does not give extensions the Security domain, and the person's Chrome checks certificates as it always does for them; drop ignoreHTTPSErrors (Playwright) or acceptInsecureCerts (Puppeteer), or serve the site with a certificate the browser trusts")
	return true
}
