package extcdp_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
)

// watchedPopup returns the target id of the tab opener opened, and whether the
// relay lists it attached; "" when there is none.
func watchedPopup(b *rawClient, opener string) (string, bool) {
	var res struct {
		TargetInfos []struct {
			TargetID string `json:"targetId"`
			OpenerID string `json:"openerId"`
			Attached bool   `json:"attached"`
		} `json:"targetInfos"`
	}
	jsonv2.Unmarshal(b.must("", "Target.getTargets", nil), &res, wire.Options)
	for _, ti := range res.TargetInfos {
		if ti.OpenerID == opener {
			return ti.TargetID, ti.Attached
		}
	}
	return "", false
}

// waitPopupAttached waits until the relay lists the popup of opener attached
// (or not, with want false), up to d; it reports whether it got there.
func waitPopupAttached(b *rawClient, opener string, want bool, d time.Duration) (string, bool) {
	var id string
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		p, a := watchedPopup(b, opener)
		if p != "" {
			id = p
			if a == want {
				return p, true
			}
		}
	}
	return id, false
}

// The relay keeps its debugger on a popup of a program's tab while the
// program denies downloads. Once the program stops asking for it (its
// behavior back to default, or the session whose deny it was gone), the
// popup must be let go: else Chrome's debugging bar stays on for a tab no
// session uses, for as long as the popup lives.
func TestRedTeamWatchLetGoWhenNoLongerNeeded(t *testing.T) {
	srv := loopbackServer(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/popup" {
			fmt.Fprint(w, `<!doctype html><title>popup</title><p>popup`)
			return
		}
		fmt.Fprint(w, `<!doctype html><title>page</title><a id="x" href="/popup" target="_blank">open</a>`)
	}))
	cases := []struct {
		name string
		set  func(b *rawClient, sid string)
		undo func(b *rawClient, sid string)
	}{
		{"browser-deny-then-default",
			func(b *rawClient, sid string) {
				b.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "deny"})
			},
			func(b *rawClient, sid string) {
				b.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "default"})
			}},
		{"session-deny-then-default",
			func(b *rawClient, sid string) {
				b.must(sid, "Browser.setDownloadBehavior", map[string]any{"behavior": "deny"})
			},
			func(b *rawClient, sid string) {
				b.must(sid, "Browser.setDownloadBehavior", map[string]any{"behavior": "default"})
			}},
		{"session-deny-then-detach",
			func(b *rawClient, sid string) {
				b.must(sid, "Browser.setDownloadBehavior", map[string]any{"behavior": "deny"})
			},
			func(b *rawClient, sid string) {
				b.must("", "Target.detachFromTarget", map[string]any{"sessionId": sid})
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, tok := endpoint(t)
			b := dialRawTo(t, s, tok)
			tid, sid := b.open(srv.URL + "/page")
			t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": tid}) })
			tc.set(b, sid)
			b.eval(sid, "document.getElementById('x').click(), 1")
			pid, ok := waitPopupAttached(b, tid, true, 10*time.Second)
			if pid != "" {
				t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": pid}) })
			}
			if !ok {
				t.Fatal("the popup was never watched: this run shows nothing")
			}
			tc.undo(b, sid)
			if _, ok := waitPopupAttached(b, tid, false, 5*time.Second); !ok {
				st, _ := tabStatus(pid)
				t.Errorf("the program no longer denies downloads, yet the relay still holds its debugger on the popup no session uses (status %+v): the debugging bar stays", st)
			}
		})
	}
}

// The person, looking at a program's tab, Ctrl+clicks one of its links: a
// tab the PERSON opened (the relay takes it for the program's: its opener
// is the program's tab). There the person downloads a file by a click of
// their own, a moment later. Before today's change that download was the
// person's; now the relay attaches to the tab and the program's deny
// cancels it.
func TestRedTeamPersonsCtrlClickTabDownloadNotDenied(t *testing.T) {
	name := fmt.Sprintf("zz-ctrl-%d.bin", time.Now().UnixNano())
	var mu sync.Mutex
	var log []string
	note := func(f string, a ...any) { mu.Lock(); log = append(log, fmt.Sprintf(f, a...)); mu.Unlock() }
	srv := loopbackServer(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/file/"):
			personsSlowDownload(w, r, name, note)
		case r.URL.Path == "/article":
			fmt.Fprintf(w, `<!doctype html><title>article</title><a id="d" href="/file/%s" style="position:fixed;left:0;top:0;width:300px;height:300px;display:block">get it</a>`, name)
		default:
			fmt.Fprint(w, `<!doctype html><title>page</title><a id="x" href="/article" style="position:fixed;left:0;top:0;width:300px;height:300px;display:block">read</a>`)
		}
	}))
	u, err := env.User(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	s, tok := endpoint(t)
	b := dialRawTo(t, s, tok)
	b.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "deny"})
	tid, sid := b.open(srv.URL + "/page")
	t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": tid}) })
	b.eval(sid, `document.readyState === 'complete' || new Promise(r => onload = r)`)

	// The person's Ctrl+click, by their own connection to Chrome.
	click := func(target string, modifiers int) {
		res, err := u.Call(ctx, "Target.attachToTarget", map[string]any{"targetId": target, "flatten": true})
		if err != nil {
			t.Fatalf("the person's attach to %s: %v", target, err)
		}
		var a struct {
			SessionID string `json:"sessionId"`
		}
		jsonv2.Unmarshal(res, &a, wire.Options)
		defer u.Call(ctx, "Target.detachFromTarget", map[string]any{"sessionId": a.SessionID})
		for _, typ := range []string{"mousePressed", "mouseReleased"} {
			if _, err := u.CallSession(ctx, a.SessionID, "Input.dispatchMouseEvent", map[string]any{
				"type": typ, "x": 50, "y": 50, "button": "left", "clickCount": 1, "modifiers": modifiers,
			}); err != nil {
				t.Fatalf("the person's click: %v", err)
			}
		}
	}
	click(tid, 2) // Ctrl
	var pid string
	for deadline := time.Now().Add(10 * time.Second); pid == "" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		ts, _ := u.Targets(ctx)
		for _, ti := range ts {
			if ti.Type == "page" && strings.HasSuffix(ti.URL, "/article") {
				pid = ti.TargetID
			}
		}
	}
	if pid == "" {
		t.Fatal("the person's Ctrl+click opened no tab")
	}
	closeUserTab(t, pid)
	time.Sleep(3 * time.Second) // the person reads the article; the relay's watch lands
	_, watched := watchedPopup(b, tid)
	t.Logf("the relay lists the person's tab attached: %v", watched)
	if _, err := u.Eval(ctx, pid, `document.readyState === 'complete' || new Promise(r => onload = r)`); err != nil {
		t.Fatal(err)
	}
	click(pid, 0) // the person clicks "get it"
	time.Sleep(5 * time.Second)
	mu.Lock()
	for _, l := range log {
		t.Logf("server: %s", l)
	}
	aborted := strings.Contains(strings.Join(log, "\n"), "ABORTED")
	mu.Unlock()
	var landed bool
	files, _ := os.ReadDir(personsDownloads())
	for _, f := range files {
		if strings.HasPrefix(f.Name(), strings.TrimSuffix(name, ".bin")) {
			landed = true
			os.Remove(filepath.Join(personsDownloads(), f.Name()))
		}
	}
	if aborted || !landed {
		t.Errorf("the person's own download, clicked in a tab the person Ctrl+clicked open, was canceled by the program's deny (aborted %v, in Downloads %v; relay watched the tab: %v)", aborted, landed, watched)
	}
}

// personsSlowDownload serves the person's download of name: 4096 bytes, the
// last 3072 after 2 s, noting whether the browser took it in full or
// aborted it (a program's deny canceled it).
func personsSlowDownload(w http.ResponseWriter, r *http.Request, name string, note func(string, ...any)) {
	note("download request (referer %s)", r.Referer())
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Header().Set("Content-Length", "4096")
	body := []byte(strings.Repeat("PERSON-BYTES ", 4096/13+1))[:4096]
	w.Write(body[:1024])
	w.(http.Flusher).Flush()
	select {
	case <-time.After(2 * time.Second):
	case <-r.Context().Done():
		note("download ABORTED by the browser (referer %s)", r.Referer())
		return
	}
	w.Write(body[1024:])
	note("download sent in full")
}
