package page

import (
	"fmt"
	"sort"
	"strings"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// What a tab keeps of its console and its requests, newest last.
const (
	maxConsole  = 200
	maxRequests = 300
	// DefaultMaxBody is how many characters of a response body browser_network
	// returns when the call does not say.
	DefaultMaxBody = 4000
)

type consoleMsg struct {
	level string
	text  string
	where string
}

type netReq struct {
	id       network.RequestID
	method   string
	url      string
	typ      string
	status   int64
	mime     string
	size     float64
	failed   string
	done     bool
	reqHdr   network.Headers
	respHdr  network.Headers
	postData bool
}

// onDevtools records a console message or a request. Call with t.mu held.
func (t *tab) onDevtools(ev any) {
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		var parts []string
		for _, a := range ev.Args {
			switch {
			case a.Value != nil:
				s := string(a.Value)
				if len(s) > 1 && s[0] == '"' {
					s = strings.Trim(s, `"`)
				}
				parts = append(parts, s)
			case a.Description != "":
				parts = append(parts, a.Description)
			default:
				parts = append(parts, string(a.Type))
			}
		}
		where := ""
		if ev.StackTrace != nil && len(ev.StackTrace.CallFrames) > 0 {
			f := ev.StackTrace.CallFrames[0]
			where = fmt.Sprintf("%s:%d", f.URL, f.LineNumber+1)
		}
		t.addConsole(consoleMsg{level: string(ev.Type), text: strings.Join(parts, " "), where: where})
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		text := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			text = d.Exception.Description
		}
		t.addConsole(consoleMsg{level: "error", text: "uncaught: " + text, where: fmt.Sprintf("%s:%d", d.URL, d.LineNumber+1)})
	case *log.EventEntryAdded:
		e := ev.Entry
		where := e.URL
		if e.LineNumber > 0 {
			where = fmt.Sprintf("%s:%d", e.URL, e.LineNumber+1)
		}
		t.addConsole(consoleMsg{level: string(e.Level), text: e.Text, where: where})
	case *network.EventRequestWillBeSent:
		r := &netReq{id: ev.RequestID, method: ev.Request.Method, url: ev.Request.URL + ev.Request.URLFragment, typ: string(ev.Type),
			reqHdr: ev.Request.Headers, postData: ev.Request.HasPostData}
		if old := t.request(ev.RequestID); old != nil {
			*old = *r // a redirect: the request goes on under the same id
			return
		}
		t.requests = append(t.requests, r)
		if len(t.requests) > maxRequests {
			t.requests = t.requests[len(t.requests)-maxRequests:]
		}
	case *network.EventResponseReceived:
		if r := t.request(ev.RequestID); r != nil && ev.Response != nil {
			r.status, r.mime, r.respHdr = ev.Response.Status, ev.Response.MimeType, ev.Response.Headers
		}
	case *network.EventLoadingFinished:
		if r := t.request(ev.RequestID); r != nil {
			r.done, r.size = true, ev.EncodedDataLength
		}
	case *network.EventLoadingFailed:
		if r := t.request(ev.RequestID); r != nil {
			r.done, r.failed = true, ev.ErrorText
			if ev.Canceled {
				r.failed = "canceled"
			}
		}
	}
}

func (t *tab) addConsole(m consoleMsg) {
	m.text = cutText(m.text, 500)
	t.console = append(t.console, m)
	if len(t.console) > maxConsole {
		t.console = t.console[len(t.console)-maxConsole:]
	}
}

func (t *tab) request(id network.RequestID) *netReq {
	for i := len(t.requests) - 1; i >= 0; i-- {
		if t.requests[i].id == id {
			return t.requests[i]
		}
	}
	return nil
}

func cutText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// consoleText lists the console messages of level (all when ""), and
// forgets them when clear.
func (a *action) consoleText(level string, clear bool) string {
	t := a.t
	t.mu.Lock()
	msgs := append([]consoleMsg(nil), t.console...)
	if clear {
		t.console = nil
	}
	t.mu.Unlock()
	var b strings.Builder
	n := 0
	for _, m := range msgs {
		if level != "" && level != "all" && !levelMatch(level, m.level) {
			continue
		}
		n++
		fmt.Fprintf(&b, "[%s] %s", m.level, m.text)
		if m.where != "" {
			fmt.Fprintf(&b, " (%s)", m.where)
		}
		b.WriteByte('\n')
	}
	if n == 0 {
		return fmt.Sprintf("no console messages (of %d kept) match", len(msgs))
	}
	return fmt.Sprintf("%d console message(s), oldest first:\n%s", n, wrapUntrusted(b.String()))
}

func levelMatch(want, got string) bool {
	switch want {
	case "error":
		return got == "error" || got == "assert"
	case "warning":
		return got == "warning" || got == "warn"
	case "info":
		return got == "info" || got == "log"
	}
	return want == got
}

// secretHeaders are never shown: they carry the person's credentials.
var secretHeaders = map[string]bool{"cookie": true, "set-cookie": true, "authorization": true, "proxy-authorization": true}

func headerLines(h network.Headers) string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		v := fmt.Sprint(h[k])
		if secretHeaders[strings.ToLower(k)] {
			v = "(withheld)"
		}
		fmt.Fprintf(&b, "  %s: %s\n", k, cutText(v, 300))
	}
	return b.String()
}

// networkText lists the tab's requests whose URL contains filter, or tells
// all about one request, its body cut at maxBody characters.
func (a *action) networkText(id, filter string, maxBody int) (string, error) {
	t := a.t
	if id == "" {
		t.mu.Lock()
		var b strings.Builder
		n := 0
		for _, r := range t.requests {
			if filter != "" && !strings.Contains(r.url, filter) {
				continue
			}
			n++
			st := "pending"
			switch {
			case r.failed != "":
				st = "failed: " + r.failed
			case r.status != 0:
				st = fmt.Sprint(r.status)
			}
			fmt.Fprintf(&b, "%s %s %s %s [%s] %s", r.id, r.method, cutText(r.url, 200), st, r.typ, r.mime)
			if r.done && r.size > 0 {
				fmt.Fprintf(&b, " %.0f B", r.size)
			}
			b.WriteByte('\n')
		}
		kept := len(t.requests)
		t.mu.Unlock()
		if n == 0 {
			return fmt.Sprintf("no requests (of %d kept) match", kept), nil
		}
		return fmt.Sprintf("%d request(s), oldest first; pass a request_id for its headers and body:\n%s", n, wrapUntrusted(b.String())), nil
	}
	t.mu.Lock()
	r := t.request(network.RequestID(id))
	var c netReq
	if r != nil {
		c = *r
	}
	t.mu.Unlock()
	if r == nil {
		return "", fmt.Errorf("%w: no request %q in this tab; list the requests first", ErrUnsupported, id)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\nstatus: %d %s\nrequest headers:\n%s", c.method, c.url, c.status, c.failed, headerLines(c.reqHdr))
	if c.postData {
		if pd, err := chromedp.Call(a.ctx, network.GetRequestPostData, network.GetRequestPostDataParams{RequestID: c.id}); err == nil {
			fmt.Fprintf(&b, "request body:\n%s\n", cutText(string(pd.PostData), maxBody))
		}
	}
	fmt.Fprintf(&b, "response headers:\n%s", headerLines(c.respHdr))
	switch {
	case !c.done:
		b.WriteString("response body: not finished yet\n")
	case c.failed != "":
	default:
		body, err := chromedp.Call(a.ctx, network.GetResponseBody, network.GetResponseBodyParams{RequestID: c.id})
		switch {
		case err != nil:
			fmt.Fprintf(&b, "response body: not available (%v)\n", err)
		case body.Base64encoded:
			fmt.Fprintf(&b, "response body: %d characters of base64 (binary); save it with browser_capture and its URL\n", len(body.Body))
		default:
			total := len([]rune(string(body.Body)))
			fmt.Fprintf(&b, "response body (%d characters", total)
			if total > maxBody {
				fmt.Fprintf(&b, ", the first %d", maxBody)
			}
			fmt.Fprintf(&b, "):\n%s\n", cutText(string(body.Body), maxBody))
		}
	}
	return wrapUntrusted(b.String()), nil
}
