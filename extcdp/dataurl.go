package extcdp

import (
	"context"
	"encoding/base64"
	"fmt"
	"html"
	"mime"
	"strings"
	"unicode/utf8"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"

	"github.com/livetab/livetab/internal/wire"
)

// Chrome takes a Page.navigate that comes through chrome.debugger as one a
// page started, and it blocks a page's navigation of the top frame to a
// data: URL ("Not allowed to navigate top frame to data URL", errorText
// net::ERR_ABORTED); chrome.tabs.update is treated alike. Chrome's own port
// loads it. So the relay loads it as about:blank, a real navigation with
// its own loaderId and lifecycle, and writes the decoded document into it
// (Page.setDocumentContent) before it answers: the client sees the page
// when its Page.navigate returns, as with Chrome. location.href says
// about:blank, not the data: URL; the origin is opaque in both.
// docs/decisions/2026-11-24-data-urls-load-as-about-blank.md says why.

// dataDocument returns the HTML that shows the data: URL u (what follows
// "data:") as Chrome shows it, and ok=false for media types the relay does
// not render (images, PDF…), which go to Chrome as they came.
func dataDocument(u string) (doc string, ok bool) {
	u, _, _ = strings.Cut(u, "#")
	meta, body, found := strings.Cut(u, ",")
	if !found {
		return "", false
	}
	b64 := false
	if m, ok := strings.CutSuffix(strings.TrimRight(meta, " "), ";base64"); ok {
		meta, b64 = m, true
	} else if m, ok := strings.CutSuffix(strings.TrimRight(meta, " "), ";BASE64"); ok {
		meta, b64 = m, true
	}
	typ := "text/plain"
	if strings.TrimSpace(meta) != "" {
		t, _, err := mime.ParseMediaType(meta)
		if err != nil {
			t = strings.ToLower(strings.TrimSpace(strings.SplitN(meta, ";", 2)[0]))
		}
		typ = t
	}
	if typ != "text/html" && typ != "text/plain" {
		return "", false
	}
	data := percentDecode(body)
	if b64 {
		clean := strings.Map(func(r rune) rune {
			if r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' {
				return -1
			}
			return r
		}, string(data))
		d, err := base64.StdEncoding.DecodeString(clean)
		if err != nil {
			d, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(clean, "="))
		}
		if err != nil {
			return "", false // Chrome fails it as a bad URL: let it say so
		}
		data = d
	}
	s := string(data)
	if !utf8.ValidString(s) {
		// Not UTF-8: windows-1252 is what a page with no charset falls back
		// to; Latin-1 is its close cousin and needs no table.
		r := make([]rune, len(data))
		for i, c := range data {
			r[i] = rune(c)
		}
		s = string(r)
	}
	if typ == "text/plain" {
		// The document Chrome makes of a text file.
		s = `<html><head><meta name="color-scheme" content="light dark"></head><body><pre style="word-wrap: break-word; white-space: pre-wrap;">` + html.EscapeString(s) + `</pre></body></html>`
	}
	return s, true
}

// percentDecode undoes %XX escapes and leaves a '%' that starts none, as
// Chrome does for data: URLs.
func percentDecode(s string) []byte {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			out = append(out, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		out = append(out, s[i])
	}
	return out
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// dataNavigate answers a main-frame Page.navigate to a data: URL whose
// document is doc (see dataDocument). finish runs once it is answered.
func (c *Client) dataNavigate(m *cdproto.Message, t *tab, sid, url, doc string, finish func()) {
	params, _ := jsonv2.Marshal(map[string]string{"url": "about:blank"}, wire.Options)
	c.tabCall(t, sid, cdproto.CommandPageNavigate, params, func(res jsonv2.Value, err error) {
		if err != nil {
			c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab: loading %.80q as about:blank (Chrome refuses data: URLs in the top frame through an extension): %v", url, err))
			finish()
			return
		}
		var nav struct {
			FrameID   target.ID `json:"frameId"`
			ErrorText string    `json:"errorText"`
		}
		if err := jsonv2.Unmarshal(res, &nav, wire.Options); err != nil || nav.ErrorText != "" || nav.FrameID == "" {
			c.reply(m.ID, m.SessionID, res)
			finish()
			return
		}
		set, _ := jsonv2.Marshal(map[string]string{"frameId": string(nav.FrameID), "html": doc}, wire.Options)
		c.tabCall(t, sid, "Page.setDocumentContent", set, func(_ jsonv2.Value, err error) {
			defer finish()
			if err != nil {
				c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab: writing the document of %.80q into the tab: %v", url, err))
				return
			}
			c.reply(m.ID, m.SessionID, res)
		})
	})
}

// tabCall sends one command of the relay's own to the attachment of t (or
// its child session sid) and passes on the result, within probeTimeout.
func (c *Client) tabCall(t *tab, sid string, method cdproto.MethodType, params jsonv2.Value, done func(jsonv2.Value, error)) {
	ctx, cancel := context.WithTimeout(c.ctx, probeTimeout)
	f := &wire.Frame{Method: string(method), Params: params, TabID: t.id, SessionID: sid}
	err := c.r.b.Go(ctx, f, func(rep *wire.Frame, err error) {
		cancel()
		switch {
		case err != nil:
			done(nil, err)
		case rep.Error != nil:
			done(nil, rep.Error)
		default:
			done(rep.Result, nil)
		}
	})
	if err != nil {
		cancel()
		done(nil, err)
	}
}
