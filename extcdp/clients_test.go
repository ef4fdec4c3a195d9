package extcdp_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/livetab/livetab/extcdp"
)

// runClient runs one of the node scripts in testdata/clients, unmodified
// Playwright or Puppeteer, against the relay's CDP endpoint.
func runClient(t *testing.T, script string, extraEnv ...string) {
	t.Helper()
	srv, tok := endpoint(t)
	node, err := exec.LookPath("node")
	mods := filepath.Join("testdata", "clients", "node_modules")
	if _, statErr := os.Stat(mods); err != nil || statErr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node and testdata/clients/node_modules are required under CI (scripts/test.sh installs them): %v %v", err, statErr)
		}
		t.Skip("no node or no testdata/clients/node_modules: run `npm ci` in extcdp/testdata/clients")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", script)
	cmd.Dir = filepath.Join("testdata", "clients")
	wsURL := extcdp.RelayFor(env.Bridge).BrowserURL(strings.TrimPrefix(srv.URL, "http://"), tok)
	cmd.Env = append(os.Environ(), append(extraEnv, "LIVETAB_CDP_URL="+wsURL, "SITE_URL="+site.URL)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out.String())
	}
	t.Logf("%s", out.String())
}

func TestPlaywright(t *testing.T) {
	runClient(t, "playwright.test.js")
	sinkMu.Lock()
	got := sink["pw.bin"]
	sinkMu.Unlock()
	if len(got) != 300000 || bytes.Count(got, []byte{7}) != 300000 {
		t.Fatalf("the server received %d bytes from Playwright's upload", len(got))
	}
}

func TestPuppeteer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pptr.txt")
	os.WriteFile(path, []byte("from puppeteer"), 0o644)
	runClient(t, "puppeteer.test.js", "UPLOAD_FILE="+path)
	sinkMu.Lock()
	got := sink["pptr.txt"]
	sinkMu.Unlock()
	if string(got) != "from puppeteer" {
		t.Fatalf("the server received %q from Puppeteer's upload", got)
	}
}
