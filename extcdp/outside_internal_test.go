package extcdp

import (
	"strings"
	"testing"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
)

func TestScrubOutside(t *testing.T) {
	c := &Client{}
	c.notes.hold([]string{"127.0.0.1"})
	ev := func(method cdproto.MethodType, params string) string {
		return string(c.scrubOutside(&cdproto.Message{Method: method, Params: jsonv2.Value(params)}).Params)
	}
	ev(cdproto.EventNetworkRequestWillBeSent, `{"requestId":"in","request":{"url":"http://127.0.0.1/a","headers":{}}}`)
	ev(cdproto.EventNetworkRequestWillBeSent, `{"requestId":"out","request":{"url":"http://127.0.0.2/a","headers":{}}}`)
	for _, tc := range []struct {
		method      cdproto.MethodType
		params      string
		kept, taken []string
	}{
		{cdproto.EventNetworkRequestWillBeSentExtraInfo, `{"requestId":"in","headers":{"Cookie":"own=1"},"associatedCookies":[{"cookie":{"domain":"127.0.0.1","value":"own"}}]}`, []string{"own=1", `"own"`}, nil},
		{cdproto.EventNetworkRequestWillBeSentExtraInfo, `{"requestId":"out","headers":{"Cookie":"s=bank","Accept":"x"},"associatedCookies":[]}`, []string{"Accept"}, []string{"bank"}},
		{cdproto.EventNetworkRequestWillBeSentExtraInfo, `{"requestId":"new","headers":{"cookie":"s=bank"},"associatedCookies":[{"cookie":{"domain":".127.0.0.2","value":"bank"}}]}`, nil, []string{"bank"}},
		{cdproto.EventNetworkResponseReceivedExtraInfo, `{"requestId":"out","headers":{"Set-Cookie":"s=bank"},"headersText":"Set-Cookie: s=bank","blockedCookies":[{"cookieLine":"s=bank"}]}`, nil, []string{"bank"}},
		{cdproto.EventNetworkResponseReceivedExtraInfo, `{"requestId":"unknown","headers":{"Set-Cookie":"s=bank"}}`, nil, []string{"bank"}},
		{cdproto.EventNetworkResponseReceivedExtraInfo, `{"requestId":"in","headers":{"Set-Cookie":"own=1"}}`, []string{"own=1"}, nil},
		{cdproto.EventFetchRequestPaused, `{"requestId":"f1","request":{"url":"http://127.0.0.2/doc","headers":{"Cookie":"s=bank","Accept":"x"}},"responseHeaders":[{"name":"set-cookie","value":"s=bank"},{"name":"Content-Type","value":"text/html"}]}`, []string{"Accept", "Content-Type"}, []string{"bank"}},
		{cdproto.EventNetworkResponseReceived, `{"requestId":"out","response":{"url":"http://127.0.0.2/a","headers":{"Set-Cookie":"s=bank"},"requestHeaders":{"Cookie":"s=bank"},"headersText":"s=bank"}}`, []string{"127.0.0.2/a"}, []string{"bank"}},
	} {
		got := ev(tc.method, tc.params)
		for _, k := range tc.kept {
			if !strings.Contains(got, k) {
				t.Errorf("%s %s: %q was taken out: %s", tc.method, tc.params, k, got)
			}
		}
		for _, k := range tc.taken {
			if strings.Contains(got, k) {
				t.Errorf("%s %s: %q is still there: %s", tc.method, tc.params, k, got)
			}
		}
	}
	// An ExtraInfo of a request not placed yet, with no cookie outside:
	// its credentials go, its own cookies stay.
	got := ev(cdproto.EventNetworkRequestWillBeSentExtraInfo, `{"requestId":"later","headers":{"Authorization":"Basic c2VjcmV0","Cookie":"own=1"},"associatedCookies":[{"cookie":{"domain":"127.0.0.1","value":"own"}}]}`)
	if strings.Contains(got, "c2VjcmV0") || !strings.Contains(got, "own=1") {
		t.Errorf("an ExtraInfo of a request not placed yet: %s", got)
	}
	for id, want := range map[string]bool{"in": false, "out": true, "f1": true} {
		if outside, known := c.notes.lookup(id); !known || outside != want {
			t.Errorf("request %s: noted %v (known %v), want outside %v", id, outside, known, want)
		}
	}
}

func TestOutsideDocument(t *testing.T) {
	if u := outsideDocument("no MHTML at all", []string{"127.0.0.1"}); u == "" {
		t.Error("a snapshot that could not be read passed")
	}
	mhtml := "From: <Saved by Blink>\r\nContent-Type: multipart/related;\r\n\ttype=\"text/html\";\r\n\tboundary=\"----MultipartBoundary--a----\"\r\n\r\n" +
		"------MultipartBoundary--a----\r\nContent-Type: text/html\r\nContent-Location: http://127.0.0.1/page\r\n\r\n<p>own</p>\r\n" +
		"------MultipartBoundary--a----\r\nContent-Type: image/png\r\nContent-Location: http://127.0.0.2/pic.png\r\n\r\nxx\r\n" +
		"------MultipartBoundary--a----\r\nContent-Type: image/svg+xml\r\nContent-Location: http://127.0.0.2/pic.svg\r\n\r\n<svg/>\r\n"
	if u := outsideDocument(mhtml, []string{"127.0.0.1"}); u != "" {
		t.Errorf("an outside image counted as a document: %s", u)
	}
	mhtml += "------MultipartBoundary--a----\r\nContent-Type: text/html\r\nContent-ID: <frame-1@mhtml.blink>\r\nContent-Location: http://127.0.0.2/frame\r\n\r\n<p>bank</p>\r\n"
	if u := outsideDocument(mhtml, []string{"127.0.0.1"}); u != "http://127.0.0.2/frame" {
		t.Errorf("the outside frame's document was not found: %q", u)
	}
}

func TestRefuseOutsideRequest(t *testing.T) {
	c := &Client{}
	c.notes.hold([]string{"127.0.0.1"})
	var failed []string
	refused := func(method cdproto.MethodType, params string) bool {
		m := &cdproto.Message{ID: 1, Method: method, Params: jsonv2.Value(params)}
		if c.refuseOutsideRequestCheck(m) != "" {
			failed = append(failed, string(method))
			return true
		}
		return false
	}
	c.scrubOutside(&cdproto.Message{Method: cdproto.EventFetchRequestPaused, Params: jsonv2.Value(`{"requestId":"doc","resourceType":"Document","request":{"url":"http://127.0.0.2/"}}`)})
	c.scrubOutside(&cdproto.Message{Method: cdproto.EventFetchRequestPaused, Params: jsonv2.Value(`{"requestId":"img","resourceType":"Image","request":{"url":"http://127.0.0.2/a.png"}}`)})
	c.scrubOutside(&cdproto.Message{Method: cdproto.EventFetchRequestPaused, Params: jsonv2.Value(`{"requestId":"own","resourceType":"Document","request":{"url":"http://127.0.0.1/"}}`)})
	for _, tc := range []struct {
		method cdproto.MethodType
		params string
		want   bool
	}{
		{cdproto.CommandFetchGetResponseBody, `{"requestId":"doc"}`, true},
		{cdproto.CommandFetchGetResponseBody, `{"requestId":"own"}`, false},
		{cdproto.CommandFetchGetResponseBody, `{"requestId":"never"}`, true},
		{cdproto.CommandFetchFulfillRequest, `{"requestId":"doc","responseCode":200}`, true},
		{cdproto.CommandFetchFulfillRequest, `{"requestId":"img","responseCode":200}`, false},
		{cdproto.CommandFetchContinueRequest, `{"requestId":"img"}`, false},
		{cdproto.CommandFetchContinueRequest, `{"requestId":"img","headers":[]}`, true},
		{cdproto.CommandFetchContinueRequest, `{"requestId":"never","method":"POST"}`, true},
		{cdproto.CommandNetworkSearchInResponseBody, `{"requestId":"doc","query":"x"}`, true},
	} {
		if got := refused(tc.method, tc.params); got != tc.want {
			t.Errorf("%s %s: refused %v, want %v", tc.method, tc.params, got, tc.want)
		}
	}
}

func TestOnlyComments(t *testing.T) {
	for src, want := range map[string]bool{
		"": true, "  \n": true, "//# sourceURL=pptr:internal": true, "/* a */ // b\n": true,
		"1": false, "// a\nsteal()": false, "/* open": false, "/* a */ x": false,
	} {
		if got := onlyComments(src); got != want {
			t.Errorf("onlyComments(%q) = %v, want %v", src, got, want)
		}
	}
}
