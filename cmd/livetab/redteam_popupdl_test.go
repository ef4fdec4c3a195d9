package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A page of the agent's tab opens a popup whose own page then downloads:
// a moment after its load (<a download>, a blob, a frame of an attachment), a second
// navigation later, after the 10 s a first load waits for its download, or
// from a popup of the popup; or the popup's first load is the download
// (window.open(”) then a location, <a download target=_blank>, a redirect,
// a form POST with a target). An agent with no --download-dir gets none of
// them: none may land in the person's Downloads folder. Before the relay
// watched the popups of a client's tabs, popa, popframe and poplate did (2
// of 2 runs). With --download-dir they reach the directory.
func TestRedTeamPopupDownloadsDenied(t *testing.T) {
	s := needShared(t)
	file := func(w http.ResponseWriter, r *http.Request) {
		name := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
		fmt.Fprint(w, "MZ payload")
	}
	btn := func(js string) string {
		return `<button onclick="` + js + `">Claim your prize</button>`
	}
	vectors := map[string]string{
		"popa.exe":     btn(`window.open('/p/a/popa.exe')`),
		"popblob.exe":  btn(`window.open('/p/blob/popblob.exe')`),
		"popframe.exe": btn(`window.open('/p/frame/popframe.exe')`),
		"poptwice.exe": btn(`window.open('/p/twice/poptwice.exe')`),
		"poplate.exe":  btn(`window.open('/p/late/poplate.exe')`),
		"popofpop.exe": btn(`window.open('/p/pop/popofpop.exe')`),
		"empty.exe":    btn(`const w = window.open(''); w.location = '/file/empty.exe'`),
		"dlblank.exe":  `<a href="/file/dlblank.exe" download target="_blank">Claim your prize</a>`,
		"redir.exe":    `<a href="/r/redir.exe" target="_blank">Claim your prize</a>`,
		"post.exe":     `<form method="post" action="/file/post.exe" target="_blank"><button>Claim your prize</button></form>`,
	}
	popups := map[string]string{
		// A second after the popup's load: the relay's watch lands tens
		// of milliseconds after it hears of the popup, and a download
		// before that is left (docs/decisions/2026-11-29-a-tabs-downloads-can-be-denied.md).
		"a":     `<a id="x" href="/file/%s" download>x</a><script>setTimeout(() => x.click(), 1000)</script>`,
		"blob":  `<script>setTimeout(() => { const a = document.createElement('a'); a.href = URL.createObjectURL(new Blob(['MZ blob'])); a.download = '%s'; document.body.append(a); a.click(); }, 1000)</script>`,
		"frame": `<script>setTimeout(() => { const f = document.createElement('iframe'); f.src = '/file/%s'; document.body.append(f) }, 1000)</script>`,
		"twice": `<script>setTimeout(() => { location.href = '/file/%s' }, 300)</script>`,
		// After the 10 s a load waits for its download.
		"late": `<script>setTimeout(() => { const a = document.createElement('a'); a.href = '/file/%s'; a.download = ''; document.body.append(a); a.click(); }, 11000)</script>`,
		"pop":  `<script>window.open('/file/%s')</script><a id="x" href="/file/%[1]s" target="_blank">x</a><script>x.click()</script>`,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/v/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><title>free prizes</title>%s`, vectors[strings.TrimPrefix(r.URL.Path, "/v/")])
	})
	mux.HandleFunc("/p/", func(w http.ResponseWriter, r *http.Request) {
		parts := strings.Split(r.URL.Path, "/") // "", p, kind, name
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><title>popup</title>`+popups[parts[2]], parts[3])
	})
	mux.HandleFunc("/r/", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/file/"+strings.TrimPrefix(r.URL.Path, "/r/"), http.StatusFound)
	})
	mux.HandleFunc("/file/", file)
	hostile := httptest.NewServer(mux)
	t.Cleanup(hostile.Close)

	for _, withDir := range []bool{false, true} {
		t.Run(fmt.Sprintf("download-dir=%v", withDir), func(t *testing.T) {
			names := []string{"popa.exe", "popframe.exe", "poptwice.exe", "post.exe"}
			args := []string{"--allow-domain", "127.0.0.1"}
			dir := t.TempDir()
			if withDir {
				args = append(args, "--download-dir", dir)
			} else {
				names = nil
				for name := range vectors {
					names = append(names, name)
				}
			}
			downloads := filepath.Join(s.home.dir, "Downloads")
			before := listFiles(downloads)
			c := startMCP(t, s.home, nil, args...)
			for _, name := range names {
				c.call(t, "browser_tabs", map[string]any{"action": "open", "url": hostile.URL + "/v/" + name})
				snap := mustSnap(t, c)
				what := `button "Claim your prize"`
				if strings.Contains(snap, `link "Claim your prize"`) {
					what = `link "Claim your prize"`
				}
				out := resultText(c.call(t, "browser_click", map[string]any{"index": index(t, snap, what)}))
				t.Logf("the click on %s: %s", name, firstLine(out))
			}
			wait := 13 * time.Second // poplate's download comes at 11 s
			if withDir {
				wait = 3 * time.Second
			}
			time.Sleep(wait)
			var landed []string
			for f := range listFiles(downloads) {
				if !before[f] {
					landed = append(landed, filepath.Base(f))
				}
			}
			if len(landed) > 0 {
				t.Errorf("files landed in the person's Downloads folder %s: %v", downloads, landed)
			}
			got := listFiles(dir)
			switch {
			case withDir && len(got) < len(names):
				t.Errorf("the control: %d files reached --download-dir from the %d popups that download: %v", len(got), len(names), got)
			case !withDir && len(got) > 0:
				t.Errorf("the download dir, given to no one, holds %v", got)
			}
		})
	}
}
