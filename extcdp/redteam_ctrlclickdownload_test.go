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

// TestRedTeamCtrlClickTabDownloadWithSession: as
// TestRedTeamPersonsCtrlClickTabDownloadNotDenied ("a tab the person opened
// behind a program's (a Ctrl+click) stays theirs"), but the program has a
// session on the person's Ctrl+click tab, as a client that auto-attaches
// to its tab's new targets does; and it leaves as the download runs. While
// it stays, its session there takes the tab's downloads, as on any tab of
// the person's it drives; once it is gone, the person's are theirs.
func TestRedTeamCtrlClickTabDownloadWithSession(t *testing.T) {
	for _, how := range []string{"leaves"} {
		t.Run(how, func(t *testing.T) {
			name := fmt.Sprintf("ctrlclick-dl-%s-%d.bin", how, time.Now().UnixNano())
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
			progDir := t.TempDir()
			b := dialRaw(t)
			b.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "allow", "downloadPath": progDir})
			tid, sid := b.open(srv.URL + "/page")
			t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": tid}) })
			b.eval(sid, `document.readyState === 'complete' || new Promise(r => onload = r)`)
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
			click(tid, 2)
			var pid string
			for deadline := time.Now().Add(10 * time.Second); pid == "" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				ts, _ := u.Targets(ctx)
				for _, ti := range ts {
					if ti.Type == "page" && strings.HasSuffix(ti.URL, "/article") && strings.HasPrefix(ti.URL, srv.URL) {
						pid = ti.TargetID
					}
				}
			}
			if pid == "" {
				t.Fatal("the person's Ctrl+click opened no tab")
			}
			closeUserTab(t, pid)
			psid := b.attach(pid) // the program attaches to its tab's new target
			b.must(psid, "Page.enable", nil)
			time.Sleep(time.Second)
			if _, err := u.Eval(ctx, pid, `document.readyState === 'complete' || new Promise(r => onload = r)`); err != nil {
				t.Fatal(err)
			}
			click(pid, 0) // the person clicks "get it"
			if how == "leaves" {
				time.Sleep(700 * time.Millisecond)
				b.ws.CloseNow()
			}
			for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				if finishedIn(personsDownloads(), strings.TrimSuffix(name, ".bin")) || finishedIn(progDir, "") {
					break
				}
			}
			time.Sleep(500 * time.Millisecond) // a move under way
			mu.Lock()
			for _, l := range log {
				t.Logf("server: %s", l)
			}
			aborted := strings.Contains(strings.Join(log, "\n"), "ABORTED")
			mu.Unlock()
			var inPersons, inProgram bool
			files, _ := os.ReadDir(personsDownloads())
			for _, f := range files {
				if strings.HasPrefix(f.Name(), strings.TrimSuffix(name, ".bin")) {
					inPersons = true
					os.Remove(filepath.Join(personsDownloads(), f.Name()))
				}
			}
			filepath.Walk(progDir, func(p string, fi os.FileInfo, err error) error {
				if err == nil && !fi.IsDir() {
					t.Logf("in the program's directory: %s", p)
					inProgram = true
				}
				return nil
			})
			if aborted || !inPersons || inProgram {
				t.Errorf("the person's download in the tab they Ctrl+clicked open from a program's tab (%s): aborted %v, in the person's Downloads %v, in the program's directory %v", how, aborted, inPersons, inProgram)
			}
		})
	}
}
