package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/livetab/livetab/internal/browsertest"
	"github.com/livetab/livetab/policy"
)

// A capture called with a progress token reports its advance through
// notifications/progress, the last one at the full size.
func TestCaptureProgress(t *testing.T) {
	env := browsertest.Start(t, browsertest.Options{})
	const size = 3<<20 + 5
	st := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><title>Clip</title><video id="v"></video><script>
			const d = new Uint8Array(%d);
			for (let i = 0; i < d.length; i++) d[i] = (i * 7) & 255;
			document.getElementById('v').src = URL.createObjectURL(new Blob([d], {type: 'video/webm'}));
		</script>`, size)
	}))
	t.Cleanup(st.Close)
	want := make([]byte, size)
	for i := range want {
		want[i] = byte(i * 7)
	}
	h := sha256.Sum256(want)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pol := &policy.Policy{AllowDomains: []string{"127.0.0.1"}, DownloadDir: t.TempDir()}
	s, err := New(Options{Browser: env.Allocator(t), Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	ct, stt := mcp.NewInMemoryTransports()
	if _, err := s.MCPServer().Connect(ctx, stt, nil); err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		notes []*mcp.ProgressNotificationParams
	)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "livetab-test", Version: "v0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			notes = append(notes, req.Params)
			mu.Unlock()
		},
	}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	c := &client{cs}
	c.ok(t, "browser_navigate", map[string]any{"url": st.URL + "/"})
	params := &mcp.CallToolParams{Name: "browser_capture", Arguments: map[string]any{"selector": "#v"}}
	params.SetProgressToken("clip-1")
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatal(resultText(res))
	}
	var out captureOutput
	structured(t, res, &out)
	if out.SHA256 != hex.EncodeToString(h[:]) || out.Size != size {
		t.Errorf("captured %d bytes sha256 %s, want %d bytes %x", out.Size, out.SHA256, size, h)
	}
	// The notifications travel apart from the result: wait for the last.
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(notes)
		var last *mcp.ProgressNotificationParams
		if n > 0 {
			last = notes[n-1]
		}
		mu.Unlock()
		if last != nil && last.Progress == size || time.Now().After(deadline) {
			if last == nil || last.ProgressToken != "clip-1" || last.Progress != size || last.Total != size {
				t.Fatalf("progress notifications %d, the last %+v; want one at %d of %d for token clip-1", n, last, size, size)
			}
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	for i := 1; i < len(notes); i++ {
		if notes[i].Progress <= notes[i-1].Progress {
			t.Errorf("progress went from %v to %v", notes[i-1].Progress, notes[i].Progress)
		}
	}
	t.Logf("%d notifications", len(notes))
	mu.Unlock()
}
