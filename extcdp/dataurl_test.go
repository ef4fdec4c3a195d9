package extcdp_test

import (
	"testing"

	"github.com/livetab/livetab/extcdp"
)

// What a data: URL (after "data:") becomes in the tab, as Chrome shows it.
func TestDataDocument(t *testing.T) {
	const pre = `<html><head><meta name="color-scheme" content="light dark"></head><body><pre style="word-wrap: break-word; white-space: pre-wrap;">`
	for _, tc := range []struct {
		url, want string
		ok        bool
	}{
		{"text/html,<h1>Hi</h1>", "<h1>Hi</h1>", true},
		{"text/html;charset=utf-8,%3Cb%3E%C3%A9%3C/b%3E", "<b>é</b>", true},
		{"TEXT/HTML;base64,PGI+aGk8L2I+", "<b>hi</b>", true},
		{"text/html;base64,PGI+ aGk8L2I+", "<b>hi</b>", true},
		{"text/html,100%25 and 100% sure", "100% and 100% sure", true},
		{"text/html,<p>a</p>#frag", "<p>a</p>", true},
		{",<b>plain</b>", pre + "&lt;b&gt;plain&lt;/b&gt;</pre></body></html>", true},
		{"text/plain;charset=latin1;base64,6Q==", pre + "é</pre></body></html>", true},
		{"image/png;base64,AAAA", "", false},
		{"text/html;base64,!!!", "", false},
		{"no comma", "", false},
	} {
		got, ok := extcdp.DataDocument(tc.url)
		if got != tc.want || ok != tc.ok {
			t.Errorf("data:%s: %q, %v; want %q, %v", tc.url, got, ok, tc.want, tc.ok)
		}
	}
}
