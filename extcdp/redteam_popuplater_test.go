package extcdp_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
)

// A program's page opens a popup, which no client attaches to, and the
// popup's page downloads a moment later: an <a download> and a frame of an
// attachment. Chrome's Browser.setDownloadBehavior holds in every tab of
// the browser, popups too; before the relay watched the popups of its
// clients' tabs, a program that denied downloads found the popup's files
// in the person's Downloads folder, and one that named a downloadPath did
// not get them. The watch holds after the extension's service worker
// restarted (deny-after-worker-stop): the debugger outlives the worker,
// and the relay once let go of the popup it found attached with no session;
// and after the popup's frame went to a URL extensions may not debug,
// which ends the debugger's session there (deny-after-reattach): the
// relay's own Page and auto-attach are sent again.
func TestRedTeamPopupsLaterDownloadsHeedTheBehavior(t *testing.T) {
	for _, run := range []string{"deny", "allowAndName", "deny-after-worker-stop", "deny-after-reattach"} {
		behavior, restart := strings.TrimSuffix(strings.TrimSuffix(run, "-after-worker-stop"), "-after-reattach"), strings.HasSuffix(run, "-after-worker-stop")
		reattach := strings.HasSuffix(run, "-after-reattach")
		t.Run(run, func(t *testing.T) {
			name := fmt.Sprintf("later-%s-%d", behavior, time.Now().UnixNano())
			var asked atomic.Int64
			var release, reattachNow atomic.Bool
			popup := "/popup"
			if reattach {
				popup += "?reattach"
			}
			srv := loopbackServer(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case strings.HasPrefix(r.URL.Path, "/file/"):
					asked.Add(1)
					w.Header().Set("Content-Type", "application/octet-stream")
					w.Header().Set("Content-Disposition", `attachment; filename="`+strings.TrimPrefix(r.URL.Path, "/file/")+`"`)
					fmt.Fprint(w, "MZ payload")
				case r.URL.Path == "/go":
					if !release.Load() && reattachNow.Load() {
						fmt.Fprint(w, "reattach")
						return
					}
					fmt.Fprint(w, release.Load())
				case r.URL.Path == "/popup":
					// The page downloads once the test saw the popup
					// watched, so that the run shows the watch and not
					// the race with it (see watchPopupDownloads).
					fmt.Fprintf(w, `<!doctype html><title>popup</title><script>
(async () => {
  while (location.search === '?reattach' && await (await fetch('/go')).text() !== 'reattach') await new Promise((r) => setTimeout(r, 50));
  if (location.search === '?reattach') { const f = document.createElement('iframe'); f.src = 'badurl://localhost/'; document.body.append(f); }
  while (await (await fetch('/go')).text() !== 'true') await new Promise((r) => setTimeout(r, 50));
  const a = document.createElement('a'); a.href = '/file/%[1]s-a.bin'; a.download = ''; document.body.append(a); a.click();
  setTimeout(() => { const f = document.createElement('iframe'); f.src = '/file/%[1]s-frame.bin'; document.body.append(f) }, 800);
})();
</script>`, name)
				default:
					fmt.Fprint(w, `<!doctype html><title>page</title><a id="x" href="`+popup+`" target="_blank">open</a>`)
				}
			}))
			dir := t.TempDir()
			s, tok := endpoint(t)
			b := dialRawTo(t, s, tok)
			params := map[string]any{"behavior": behavior, "eventsEnabled": true}
			if behavior != "deny" {
				params["downloadPath"] = dir
			}
			b.must("", "Browser.setDownloadBehavior", params)
			tid, sid := b.open(srv.URL + "/page")
			t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": tid}) })
			b.eval(sid, "document.getElementById('x').click(), 1")
			// The popup is listed attached once the relay watches it.
			watched := func() bool {
				for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
					var res struct {
						TargetInfos []struct {
							OpenerID string `json:"openerId"`
							Attached bool   `json:"attached"`
						} `json:"targetInfos"`
					}
					jsonv2.Unmarshal(b.must("", "Target.getTargets", nil), &res, wire.Options)
					for _, ti := range res.TargetInfos {
						if ti.OpenerID == tid && ti.Attached {
							return true
						}
					}
				}
				return false
			}
			if !watched() {
				t.Fatal("the popup was never listed attached: the relay does not watch it")
			}
			if restart {
				u := stopWorker(t)
				wake, err := u.OpenTab(t.Context(), "about:blank")
				if err != nil {
					t.Fatal(err)
				}
				defer u.CloseTab(context.Background(), wake)
				b.eval(sid, "1") // the extension is back
				time.Sleep(time.Second)
				if !watched() {
					t.Fatal("the popup is no longer listed attached after the worker restarted: the relay let go of it")
				}
			}
			if reattach {
				reattachNow.Store(true)
				time.Sleep(2 * time.Second) // the frame's navigation, and the extension's attach again
			}
			release.Store(true)
			deadline := time.Now().Add(15 * time.Second)
			for asked.Load() < 2 && time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
			}
			time.Sleep(2 * time.Second)
			if asked.Load() < 2 {
				t.Fatalf("the popup asked for %d of its 2 files: this run shows nothing", asked.Load())
			}
			var landed []string
			files, _ := os.ReadDir(personsDownloads())
			for _, f := range files {
				if strings.HasPrefix(f.Name(), name) {
					landed = append(landed, f.Name())
					os.Remove(filepath.Join(personsDownloads(), f.Name()))
				}
			}
			if len(landed) > 0 {
				t.Errorf("the popup's downloads landed in the person's Downloads folder: %v", landed)
			}
			got, _ := os.ReadDir(dir)
			// Chrome lets a page download several files only once the person
			// allowed it, so the frame's may be refused.
			if behavior == "deny" && len(got) > 0 || behavior != "deny" && len(got) == 0 {
				t.Errorf("%s: the downloadPath holds %d files", behavior, len(got))
			}
		})
	}
}
