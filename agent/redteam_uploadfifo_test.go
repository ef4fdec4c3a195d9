//go:build unix

package agent

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/livetab/livetab/internal/browsertest"
	"github.com/livetab/livetab/policy"
)

// A FIFO in the upload directory (put there by another program, or named
// by a hostile page's instructions) must not hang browser_upload forever:
// the tool must answer, with an error, within its caller's patience, and
// not sit in an open(2) that no context can interrupt.
func TestRedTeamUploadFIFODoesNotHang(t *testing.T) {
	env := browsertest.Start(t, browsertest.Options{})
	st := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>Upload</title><label>Attach <input type="file" id="f"></label>`)
	}))
	t.Cleanup(st.Close)
	up := t.TempDir()
	fifo := filepath.Join(up, "report.pdf")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	// Whatever happens, unblock a reader stuck on the FIFO at the end.
	t.Cleanup(func() {
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	pol := &policy.Policy{AllowDomains: []string{"127.0.0.1"}, UploadDir: up}
	cs := connect(t, newServer(t, Options{Browser: env.Allocator(t), Policy: pol}))
	c := &client{cs}
	c.ok(t, "browser_navigate", map[string]any{"url": st.URL + "/"})

	// The agent's client gives up after 20 s and cancels the call; the
	// server must have answered by then, or at least stop once canceled.
	cctx, ccancel := context.WithTimeout(ctx, 20*time.Second)
	defer ccancel()
	start := time.Now()
	res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "browser_upload",
		Arguments: map[string]any{"selector": "#f", "files": []string{"report.pdf"}}})
	took := time.Since(start)
	if err != nil {
		t.Fatalf("browser_upload of a FIFO in the upload directory did not answer within %v (%v): the server hangs in open(2) of the FIFO", took.Round(time.Second), err)
	}
	if !res.IsError {
		t.Errorf("browser_upload of a FIFO succeeded: %s", resultText(res))
	}
	t.Logf("answered in %v: %s", took.Round(time.Millisecond), resultText(res))

	// The server is still usable afterwards.
	c.ok(t, "browser_snapshot", nil)
}
