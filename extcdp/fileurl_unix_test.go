//go:build unix

package extcdp

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestFileURLRefusalOfAFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "p")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if why := fileURLRefusal("file://" + fifo); !strings.Contains(why, "named pipe") {
		t.Errorf("a FIFO: %q", why)
	}
	if why := fileURLRefusal("file:///dev/null"); !strings.Contains(why, "device") {
		t.Errorf("a device: %q", why)
	}
}
