package extcdp

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestFileURLPath(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the paths below are POSIX paths")
	}
	for _, tc := range []struct{ in, want string }{
		{"file:///tmp/a.html", "/tmp/a.html"},
		{"file://localhost/tmp/a.html?q#f", "/tmp/a.html"},
		{"file://host/tmp/a%20b.html", "/tmp/a b.html"},
		{"file:tmp/x", "/tmp/x"},
		{"file:/tmp/x", "/tmp/x"},
		{" FILE:\\\\\\tmp\\x ", "/tmp/x"},
		{"file:///tmp/../etc/./x", "/etc/x"},
		{"file://", "/"},
	} {
		got, ok := fileURLPath(tc.in)
		if !ok || got != filepath.FromSlash(tc.want) {
			t.Errorf("fileURLPath(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"file:///tmp/sub/%zz/../../x", "/tmp/x"},
		{"file:///tmp/%zz", "/tmp/%zz"},
		{"file:///tmp/a%2", "/tmp/a%2"},
		{"file:///tmp/%41", "/tmp/A"},
	} {
		if got, ok := fileURLPath(tc.in); !ok || got != filepath.FromSlash(tc.want) {
			t.Errorf("fileURLPath(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
	for _, in := range []string{"http://x/file:///tmp", "about:blank"} {
		if got, ok := fileURLPath(in); ok {
			t.Errorf("fileURLPath(%q) = %q; want none", in, got)
		}
	}
}

func TestFileURLRefusal(t *testing.T) {
	dir := t.TempDir()
	if why := fileURLRefusal("file://" + filepath.ToSlash(dir)); why != "" {
		t.Errorf("a directory: %s", why)
	}
	if why := fileURLRefusal("file://" + filepath.ToSlash(dir) + "/missing.html"); why != "" {
		t.Errorf("a missing file (Chrome's error page): %s", why)
	}
	if why := fileURLRefusal("https://example.com/"); why != "" {
		t.Errorf("not a file: URL: %s", why)
	}
}

// TestFileURLRefusalWhileLooksHang: with every look still running (a file
// system that does not answer), the next file: URL is refused at once and
// leaves no goroutine behind.
func TestFileURLRefusalWhileLooksHang(t *testing.T) {
	for range cap(stats) {
		stats <- struct{}{}
	}
	defer func() {
		for range cap(stats) {
			<-stats
		}
	}()
	start := time.Now()
	why := fileURLRefusal("file://" + filepath.ToSlash(t.TempDir()))
	if !strings.Contains(why, "did not answer") || !strings.Contains(why, "try again") {
		t.Errorf("refusal = %q, want the file system's silence and what to do", why)
	}
	if d := time.Since(start); d > statTimeout/2 {
		t.Errorf("refused after %v, want at once", d)
	}
}
