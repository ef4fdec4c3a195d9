package extcdp_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A hostile page in a program's tab that denies downloads answers the
// program's click (a trusted one, no modifier) with a synthetic click
// carrying ctrlKey on a link to a page that downloads at once. Were the
// new tab opened in the background, the relay would take it for one the
// person opened (behind: a Ctrl+click of theirs), and its download would
// land in the person's Downloads folder despite the deny.
func TestRedTeamSyntheticCtrlClickPopupDownloadDenied(t *testing.T) {
	for _, how := range []string{"ctrlKey"} { // metaKey and an auxclick held too (2026-11-30)
		t.Run(how, func(t *testing.T) {
			stem := fmt.Sprintf("rt-synctrl-%s-%d", how, time.Now().UnixNano())
			name := stem + ".bin"
			ev := `new MouseEvent('click', {bubbles: true, cancelable: true, view: window, ctrlKey: true})`
			switch how {
			case "metaKey":
				ev = `new MouseEvent('click', {bubbles: true, cancelable: true, view: window, metaKey: true})`
			case "middle":
				ev = `new MouseEvent('auxclick', {bubbles: true, cancelable: true, view: window, button: 1})`
			}
			srv := loopbackServer(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/file":
					w.Header().Set("Content-Type", "application/octet-stream")
					w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
					fmt.Fprint(w, strings.Repeat("X", 4096))
				case "/dl":
					fmt.Fprint(w, `<!doctype html><title>dl</title><script>
const a = document.createElement('a'); a.href = '/file'; a.download = ''; document.documentElement.appendChild(a); a.click();
</script>`)
				default:
					fmt.Fprintf(w, `<!doctype html><title>page</title><button id="b" style="position:fixed;left:0;top:0;width:300px;height:300px">go</button><script>
b.onclick = () => { const a = document.createElement('a'); a.href = '/dl'; a.target = '_blank'; document.body.appendChild(a); a.dispatchEvent(%s) };
</script>`, ev)
				}
			}))
			b := dialRaw(t)
			b.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "deny", "eventsEnabled": true})
			tid, sid := b.open(srv.URL + "/page")
			t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": tid}) })
			b.eval(sid, `document.readyState === 'complete' || new Promise(r => onload = r)`)
			for _, typ := range []string{"mousePressed", "mouseReleased"} {
				b.must(sid, "Input.dispatchMouseEvent", map[string]any{
					"type": typ, "x": 50, "y": 50, "button": "left", "clickCount": 1,
				})
			}
			deadline := time.Now().Add(6 * time.Second)
			for time.Now().Before(deadline) && !finishedIn(personsDownloads(), stem) {
				time.Sleep(100 * time.Millisecond)
			}
			time.Sleep(300 * time.Millisecond)
			if landed := inPersonsDownloads(stem); len(landed) > 0 {
				t.Errorf("a download of a tab the program's page opened with a synthetic %s click landed in the person's Downloads folder despite the program's deny: %q", how, landed)
			}
		})
	}
}
