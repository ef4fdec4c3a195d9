package extcdp_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
)

// TestCancelDownload: Browser.cancelDownload (Playwright's download.cancel(),
// capture's cancellation) was "wasn't found", so a canceled download ran on
// in the person's Chrome and its file landed in the client's directory
// afterwards. Now Chrome cancels it: the server sees the response dropped,
// the client hears it canceled, and no file is left. Another client cannot
// cancel it.
func TestCancelDownload(t *testing.T) {
	var dropped atomic.Bool
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="slow.bin"`)
		w.Header().Set("Content-Length", "10000000")
		w.Write(make([]byte, 64<<10))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			dropped.Store(true)
		case <-release:
		}
	}))
	defer func() {
		close(release) // before Close, which waits for the handler
		slow.Close()
	}()

	dir := t.TempDir()
	c := dialRaw(t)
	_, sid := c.newTab(t, site.URL+"/form?cancel-download")
	c.must(sid, "Page.enable", nil)
	c.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "allowAndName", "downloadPath": dir, "eventsEnabled": true})
	c.must(sid, "Runtime.evaluate", map[string]any{"expression": "location.href = " + jsonString(slow.URL+"/slow.bin")})
	wait := func(method, contains string) jsonv2.Value {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			c.mu.Lock()
			for _, e := range c.events {
				if e.Method == method && strings.Contains(string(e.Params), contains) {
					c.mu.Unlock()
					return e.Params
				}
			}
			c.mu.Unlock()
			if time.Now().After(deadline) {
				t.Fatalf("no %s with %q within 20 s", method, contains)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	var begin struct {
		GUID string `json:"guid"`
	}
	jsonv2.Unmarshal(wait("Browser.downloadWillBegin", "slow.bin"), &begin, wire.Options)

	other := dialRaw(t)
	if _, err := other.call("", "Browser.cancelDownload", map[string]any{"guid": begin.GUID}); err == nil {
		t.Error("another client canceled the download")
	}
	c.must("", "Browser.cancelDownload", map[string]any{"guid": begin.GUID})
	wait("Browser.downloadProgress", `"canceled"`)
	deadline := time.Now().Add(10 * time.Second)
	for !dropped.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the server still sends the canceled download after 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("the canceled download left %v in the client's directory", left)
	}
}

func jsonString(s string) string {
	b, _ := jsonv2.Marshal(s)
	return string(b)
}
