package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/livetab/livetab"
	"github.com/livetab/livetab/extension"
)

// The tests run the livetab binary as users do, each with its own config
// directory, so that they never touch the real user's token or endpoint
// file. One `livetab serve --launch=headless` is shared by the tests that
// need a connected extension; chromedp talks to it from this process, which
// is not the serve's.
var (
	bin    string // the built livetab binary
	site   *httptest.Server
	shared *serveProc // nil without Chromium (outside CI)
)

const formPage = `<!doctype html><title>form</title>
<button id="btn" onclick="out.textContent='clicked '+(++window.n)">Click</button>
<p id="out">none</p><script>window.n=0</script>`

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "livetab-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin = filepath.Join(dir, "livetab")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building livetab: %v\n%s", err, out)
		return 1
	}
	site = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, formPage)
	}))
	defer site.Close()

	if _, err := extension.FindChromium(); err != nil {
		if os.Getenv("CI") != "" {
			fmt.Fprintln(os.Stderr, "Chromium is required under CI:", err)
			return 1
		}
		fmt.Println("no Chromium: the tests that need a browser skip (under CI they fail)")
		return m.Run()
	}
	h := &home{dir: filepath.Join(dir, "shared")}
	shared, err = h.serve("--addr", "127.0.0.1:0", "--launch=headless")
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the shared serve:", err)
		return 1
	}
	code := m.Run()
	// Ctrl-C ends the serve and its Chromium cleanly and takes the
	// endpoint file with it; the whole log never shows the token.
	if err := shared.interrupt(); err != nil {
		fmt.Fprintln(os.Stderr, "shared serve:", err)
		code = 1
	}
	if _, err := os.Stat(h.endpointFile()); !errors.Is(err, os.ErrNotExist) {
		fmt.Fprintln(os.Stderr, "the serve left its endpoint file behind:", err)
		code = 1
	}
	if tok := h.token(); tok == "" || strings.Contains(shared.log(), tok) {
		fmt.Fprintf(os.Stderr, "the serve's log shows the token (or there is none):\n%s", shared.log())
		code = 1
	}
	return code
}

// home is a user's config directory for the binary.
type home struct {
	dir string
	env []string // extra environment
}

func newHome(t *testing.T, env ...string) *home {
	return &home{dir: t.TempDir(), env: env}
}

func (h *home) environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "XDG_CONFIG_HOME", livetab.EndpointEnv:
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+h.dir, "XDG_CONFIG_HOME="+filepath.Join(h.dir, ".config"))
	return append(env, h.env...)
}

func (h *home) configDir() string    { return filepath.Join(h.dir, ".config", "livetab") }
func (h *home) endpointFile() string { return filepath.Join(h.configDir(), "endpoint.json") }
func (h *home) tokenFile() string    { return filepath.Join(h.configDir(), "token") }

func (h *home) token() string {
	b, _ := os.ReadFile(h.tokenFile())
	return strings.TrimSpace(string(b))
}

// run runs the binary to the end and returns its output and exit code.
func (h *home) run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = h.environ()
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("running livetab %v: %v", args, err)
	}
	return o.String(), e.String(), code
}

// serveProc is a running `livetab serve`.
type serveProc struct {
	cmd  *exec.Cmd
	home *home
	ep   livetab.Endpoint
	done chan struct{}

	mu     sync.Mutex
	stderr bytes.Buffer
}

func (s *serveProc) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.Write(p)
}

func (s *serveProc) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

// serve starts `livetab serve args...` and returns once its endpoint file
// names it (with --launch, once the extension has connected).
func (h *home) serve(args ...string) (*serveProc, error) {
	s := &serveProc{home: h, done: make(chan struct{})}
	s.cmd = exec.Command(bin, append([]string{"serve"}, args...)...)
	s.cmd.Env = h.environ()
	s.cmd.Stderr = s
	dieWithTest(s.cmd)
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		s.cmd.Wait()
		close(s.done)
	}()
	deadline := time.After(45 * time.Second)
	for {
		if e, err := livetab.ReadEndpoint(h.endpointFile()); err == nil && e.PID == s.cmd.Process.Pid {
			s.ep = e
			return s, nil
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("livetab serve exited (%v):\n%s", s.cmd.ProcessState, s.log())
		case <-deadline:
			s.cmd.Process.Kill()
			<-s.done
			return nil, fmt.Errorf("livetab serve wrote no endpoint file in 45 s:\n%s", s.log())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func startServe(t *testing.T, h *home, args ...string) *serveProc {
	t.Helper()
	s, err := h.serve(args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		select {
		case <-s.done:
		default:
			s.cmd.Process.Kill()
			<-s.done
		}
	})
	return s
}

// interrupt sends SIGINT and waits for a clean exit.
func (s *serveProc) interrupt() error {
	s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.done:
	case <-time.After(15 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
		return fmt.Errorf("livetab serve did not end within 15 s of SIGINT:\n%s", s.log())
	}
	if !s.cmd.ProcessState.Success() {
		return fmt.Errorf("livetab serve ended with %v after SIGINT:\n%s", s.cmd.ProcessState, s.log())
	}
	return nil
}

// needShared skips a test that needs the shared serve when there is no
// Chromium (TestMain has already failed under CI).
func needShared(t *testing.T) *serveProc {
	t.Helper()
	if shared == nil {
		t.Skip("no Chromium")
	}
	return shared
}
