package extcdp_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
	"github.com/livetab/livetab/livetabcdp"
)

// TestRedTeamFrameThroughPageCommands: a client held to 127.0.0.1 reads
// the document of a 127.0.0.2 frame in its allowed page with commands of
// the page's own session that take in the whole frame tree or a frame id:
// an MHTML snapshot, an isolated world made in the frame, the frame's
// resource content.
func TestRedTeamFrameThroughPageCommands(t *testing.T) {
	srv, tok := endpoint(t)
	bank := serveAt(t, "127.0.0.2", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<title>bank</title><p>zzp-snap-secret</p>")
	})
	allowed := serveAt(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<title>agent</title><iframe id=f src="%s/frame"></iframe>`, bank.URL)
	})
	a := dialRawTo(t, srv, tok)
	a.must("", livetabcdp.CommandSetPolicy, map[string]any{"domains": []string{"127.0.0.1"}})
	_, sid := a.open(allowed.URL + "/page")
	a.eval(sid, `document.readyState === 'complete' || new Promise(r => onload = r)`)
	time.Sleep(500 * time.Millisecond)
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
	res, err := a.call(sid, "Page.getFrameTree", nil)
	jsonv2.Unmarshal(res, &tree, wire.Options)
	t.Logf("frame tree: %.300s %v", res, err)
	frameID := ""
	if len(tree.FrameTree.ChildFrames) > 0 {
		frameID = tree.FrameTree.ChildFrames[0].Frame.ID
	}
	check := func(what string, res jsonv2.Value, err error) {
		t.Logf("%s: %.200s %v", what, res, err)
		if strings.Contains(string(res), "zzp-snap-secret") {
			t.Errorf("%s on the page's session read the 127.0.0.2 frame's document", what)
		}
	}
	res, err = a.call(sid, "Page.captureSnapshot", map[string]any{"format": "mhtml"})
	check("Page.captureSnapshot", res, err)
	res, err = a.call(sid, "Page.getResourceContent", map[string]any{"frameId": frameID, "url": bank.URL + "/frame"})
	check("Page.getResourceContent", res, err)
	res, err = a.call(sid, "Page.createIsolatedWorld", map[string]any{"frameId": frameID, "worldName": "zzp"})
	t.Logf("Page.createIsolatedWorld: %.200s %v", res, err)
	if err == nil {
		var w struct {
			ID int64 `json:"executionContextId"`
		}
		jsonv2.Unmarshal(res, &w, wire.Options)
		res, err = a.call(sid, "Runtime.evaluate", map[string]any{"expression": "document.body.innerText", "contextId": w.ID, "returnByValue": true})
		check("Runtime.evaluate in the frame's isolated world", res, err)
	}
	// A page of the domains alone (its image of another site is shown,
	// and stays) is still captured.
	plain := serveAt(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<title>plain</title><p>own-text</p><img src="%s/pic.png">`, bank.URL)
	})
	_, sid2 := a.open(plain.URL + "/plain")
	a.eval(sid2, `document.readyState === 'complete' || new Promise(r => onload = r)`)
	res, err = a.call(sid2, "Page.captureSnapshot", map[string]any{"format": "mhtml"})
	if err != nil || !strings.Contains(string(res), "own-text") {
		t.Errorf("a page of the domains was not captured: %.200s %v", res, err)
	}
}
