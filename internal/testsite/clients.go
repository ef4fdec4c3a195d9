package testsite

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// ClientsDir is where the Playwright and Puppeteer scripts live, with
// their node_modules (scripts/test.sh installs them).
func ClientsDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "extcdp", "testdata", "clients")
}

// RunClient runs one of the node scripts in ClientsDir, unmodified
// Playwright or Puppeteer, against the CDP endpoint cdpURL and this site.
// Under CI a missing node or node_modules fails the test.
func (s *Site) RunClient(t testing.TB, script, cdpURL string, extraEnv ...string) {
	t.Helper()
	dir := ClientsDir()
	_, err := exec.LookPath("node")
	_, statErr := os.Stat(filepath.Join(dir, "node_modules"))
	if err != nil || statErr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node and %s/node_modules are required under CI (scripts/test.sh installs them): %v %v", dir, err, statErr)
		}
		t.Skipf("no node or no node_modules: run `npm ci` in %s", dir)
	}
	out, err := s.runClient(t, script, cdpURL, extraEnv...)
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	t.Logf("%s", out)
}

func (s *Site) runClient(t testing.TB, script, cdpURL string, extraEnv ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "--test", "--test-reporter=spec", script)
	cmd.Dir = ClientsDir()
	cmd.Env = append(os.Environ(), append(extraEnv, "LIVETAB_CDP_URL="+cdpURL, "SITE_URL="+s.URL)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// CheckClients runs the Playwright and Puppeteer scripts against cdpURL
// and checks what their uploads delivered to the site.
func (s *Site) CheckClients(t *testing.T, cdpURL string) {
	t.Run("Playwright", func(t *testing.T) {
		s.RunClient(t, "playwright.test.js", cdpURL)
		if got := s.Received("pw.bin"); len(got) != 300000 || bytes.Count(got, []byte{7}) != 300000 {
			t.Fatalf("the server received %d bytes from Playwright's upload", len(got))
		}
	})
	t.Run("Puppeteer", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "pptr.txt")
		os.WriteFile(path, []byte("from puppeteer"), 0o644)
		s.RunClient(t, "puppeteer.test.js", cdpURL, "UPLOAD_FILE="+path)
		if got := s.Received("pptr.txt"); string(got) != "from puppeteer" {
			t.Fatalf("the server received %q from Puppeteer's upload", got)
		}
	})
}
