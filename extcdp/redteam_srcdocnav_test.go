package extcdp_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
)

// Playwright's frame.goto('about:srcdoc#y') on a srcdoc frame (a
// Page.navigate with the frame's id) answered, and left the tab such that
// chrome.debugger refused every later command on it, for every client and
// new sessions too: "Cannot access contents of url "about:srcdoc#y"" (red
// team, 2 of 2). Chrome loads about:srcdoc only from a frame's srcdoc
// attribute; a navigation to it leaves a page no extension may debug.
func TestRedTeamNavigateToSrcdocKeepsTheTabDebuggable(t *testing.T) {
	srv := loopbackServer(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>srcdoc</title><iframe srcdoc="<p>inner</p>"></iframe>`)
	}))
	for _, u := range []string{"about:srcdoc#y", "about:srcdoc", " ABOUT:srcdoc?x#y", "about:blank#y", "about:blank?x", "about:srcdoc?"} {
		t.Run(strings.TrimSpace(u), func(t *testing.T) {
			b := dialRaw(t)
			tid, sid := b.open(srv.URL + "/")
			t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": tid}) })
			b.eval(sid, `document.readyState === 'complete' || new Promise(r => onload = r)`)
			var tree struct {
				FrameTree struct {
					ChildFrames []struct {
						Frame struct {
							ID  string `json:"id"`
							URL string `json:"url"`
						} `json:"frame"`
					} `json:"childFrames"`
				} `json:"frameTree"`
			}
			// The frame may show in the tree a moment after the load (once
			// under load, 2026-11-30).
			for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				jsonv2.Unmarshal(b.must(sid, "Page.getFrameTree", nil), &tree, wire.Options)
				if len(tree.FrameTree.ChildFrames) == 1 || time.Now().After(deadline) {
					break
				}
			}
			if len(tree.FrameTree.ChildFrames) != 1 {
				t.Fatalf("frames: %+v", tree)
			}
			child := tree.FrameTree.ChildFrames[0].Frame.ID
			_, err := b.call(sid, "Page.navigate", map[string]any{"url": u, "frameId": child})
			t.Logf("Page.navigate %q in the srcdoc frame: %v", u, err)
			for _, s := range []string{sid, b.attach(tid)} {
				if _, err := b.call(s, "Runtime.evaluate", map[string]any{"expression": "1+1", "returnByValue": true}); err != nil {
					t.Errorf("after Page.navigate %q in a srcdoc frame, the tab cannot be debugged: %v", u, err)
				}
			}
		})
	}
}
