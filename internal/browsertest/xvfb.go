package browsertest

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// A windowed browser needs a display. Each Env that asks for one gets its
// own virtual display, so that tests running side by side never share a
// screen (nor a focused window), and a developer's own DISPLAY is left
// alone.

// xvfb is one running virtual display.
type xvfb struct {
	cmd     *exec.Cmd
	display string // ":N"
}

// RequireXvfb fails the test when Xvfb is missing and CI is set, and skips
// it otherwise: windowed tests need it (scripts/test.sh installs it).
func RequireXvfb(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("Xvfb"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("Xvfb is required under CI for windowed tests: %v (apt-get install xvfb)", err)
		}
		t.Skipf("no Xvfb: %v (apt-get install xvfb)", err)
	}
}

// startXvfb starts Xvfb on the first free display, which it names itself
// (-displayfd), at a size that holds the launched 1280×800 window.
func startXvfb() (*xvfb, error) {
	exe, err := exec.LookPath("Xvfb")
	if err != nil {
		return nil, fmt.Errorf("browsertest: a windowed browser needs Xvfb: apt-get install xvfb: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	cmd := exec.Command(exe, "-displayfd", "3", "-screen", "0", "1920x1080x24", "-nolisten", "tcp", "-noreset")
	cmd.ExtraFiles = []*os.File{w}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, fmt.Errorf("browsertest: starting Xvfb: %w", err)
	}
	w.Close()
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(r).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case n := <-line:
		if n == "" {
			cmd.Process.Kill()
			cmd.Wait()
			return nil, errors.New("browsertest: Xvfb exited without naming its display")
		}
		return &xvfb{cmd: cmd, display: ":" + n}, nil
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		return nil, errors.New("browsertest: Xvfb named no display within 20 s")
	}
}

func (x *xvfb) close() {
	x.cmd.Process.Kill()
	x.cmd.Wait()
}

// env is the process environment with DISPLAY on this display.
func (x *xvfb) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DISPLAY=") && !strings.HasPrefix(kv, "WAYLAND_DISPLAY=") {
			env = append(env, kv)
		}
	}
	return append(env, "DISPLAY="+x.display)
}
