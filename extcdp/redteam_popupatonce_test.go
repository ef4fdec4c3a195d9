package extcdp_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A program denies downloads; its page opens popups whose pages download
// at once, as their script first runs or a few milliseconds later: before
// the relay's watch of the popup has landed, so no session tells of the
// download, and the file is not what the popup loads either (lib/loads.js).
// Before the extension named the tab a download's referrer shows, some
// landed in the person's Downloads folder (3 runs of 5 had one of 18 or
// 21; none in 6 runs after).
func TestRedTeamPopupDownloadsAtOnce(t *testing.T) {
	t.Parallel() // a download test: its own servers and files; it waits on them beside the others
	vectors := map[string]string{
		"parse":   `%s`,
		"timeout": `setTimeout(() => { %s }, 0)`,
		"later":   `setTimeout(() => { %s }, 40)`,
		"loaded":  `addEventListener('DOMContentLoaded', () => { %s })`,
		"onload":  `addEventListener('load', () => { %s })`,
		"second":  `if (!sessionStorage.hop) { sessionStorage.hop = 1; location.reload() } else { %s }`,
	}
	const click = `const a = document.createElement('a'); a.href = '/file/' + location.search.slice(1); a.download = ''; document.documentElement.append(a); a.click();`
	var asked atomic.Int64
	srv := loopbackServer(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/file/"):
			asked.Add(1)
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Disposition", `attachment; filename="`+strings.TrimPrefix(r.URL.Path, "/file/")+`"`)
			fmt.Fprint(w, "MZ payload")
		case strings.HasPrefix(r.URL.Path, "/popup/"):
			fmt.Fprintf(w, `<!doctype html><title>popup</title><script>`+vectors[strings.TrimPrefix(r.URL.Path, "/popup/")]+`</script>`, click)
		default:
			fmt.Fprint(w, `<!doctype html><title>page</title><p>page`)
		}
	}))
	s, tok := endpoint(t)
	b := dialRawTo(t, s, tok)
	b.must("", "Browser.setDownloadBehavior", map[string]any{"behavior": "deny", "eventsEnabled": true})
	tid, sid := b.open(srv.URL + "/page")
	t.Cleanup(func() { b.call("", "Target.closeTarget", map[string]any{"targetId": tid}) })
	stamp := time.Now().UnixNano()
	var names []string
	for round := range 5 {
		for v := range vectors {
			name := fmt.Sprintf("atonce-%d-%s-%d.bin", stamp, v, round)
			names = append(names, name)
			b.eval(sid, fmt.Sprintf("window.open('/popup/%s?%s'), 1", v, name))
			time.Sleep(300 * time.Millisecond)
		}
	}
	for deadline := time.Now().Add(15 * time.Second); asked.Load() < int64(len(names)) && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("the popups asked for %d of %d files", asked.Load(), len(names))
	if asked.Load() == 0 {
		t.Fatal("no popup asked for its file: this run shows nothing")
	}
	time.Sleep(3 * time.Second)
	if got := landedNamed(fmt.Sprintf("atonce-%d", stamp), 2*time.Second); len(got) > 0 {
		t.Errorf("%d of %d downloads begun at once by the program's popups landed in the person's Downloads folder despite the deny: %v", len(got), len(names), got)
	}
	var res struct {
		TargetInfos []struct {
			TargetID string `json:"targetId"`
			OpenerID string `json:"openerId"`
		} `json:"targetInfos"`
	}
	unmarshal(b.must("", "Target.getTargets", nil), &res)
	for _, ti := range res.TargetInfos {
		if ti.OpenerID == tid {
			b.call("", "Target.closeTarget", map[string]any{"targetId": ti.TargetID})
		}
	}
}
