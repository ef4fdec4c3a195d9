package activeport

import "testing"

func TestURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"9222\n/devtools/browser/abc\n", "ws://127.0.0.1:9222/devtools/browser/abc"},
		{"9222\r\n/devtools/browser/abc\r\n", "ws://127.0.0.1:9222/devtools/browser/abc"},
		{"  9222 \n /devtools/browser/abc ", "ws://127.0.0.1:9222/devtools/browser/abc"},
		{"", ""},
		{"9222\n", ""}, // Chrome is still writing it
		{"9222\n/devtools/browser/\n", ""},
		{"9222\n/devtools/page/abc\n", ""},
		{"0\n/devtools/browser/abc\n", ""},
		{"65536\n/devtools/browser/abc\n", ""},
		{"x\n/devtools/browser/abc\n", ""},
		{"9222\n/devtools/browser/abc\nmore\n", ""},
	} {
		got, err := URL([]byte(c.in))
		if got != c.want || (err == nil) != (c.want != "") {
			t.Errorf("URL(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}
