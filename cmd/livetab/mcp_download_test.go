package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const reportCSV = "id,total\n1,42\n2,17\n"

// A download started by a click, from the server and from a blob the page
// made, lands in --download-dir under the site's name, and the click's
// result names the file, its size, MIME type and SHA-256. On both
// backends.
func TestMCPDownloads(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/files", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Files</title>
<a href="/report.csv" download>Report</a>
<button onclick="save()">Save notes</button>
<script>
function save() {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob(['my notes'], {type: 'text/plain'}));
  a.download = 'notes.txt';
  a.click();
}
</script>`)
	})
	mux.HandleFunc("/report.csv", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/csv")
		w.Header().Set("Content-Disposition", `attachment; filename="report.csv"`)
		fmt.Fprint(w, reportCSV)
	})
	app := httptest.NewServer(mux)
	t.Cleanup(app.Close)
	onBothBackends(t, func(t *testing.T, h *home, args []string) {
		dir := t.TempDir()
		c := startMCP(t, h, nil, append(args, "--allow-domain", "127.0.0.1", "--download-dir", dir)...)
		c.ok(t, "browser_navigate", map[string]any{"url": app.URL + "/files"})
		// A capture of the link first: capture's own download
		// behaviour, set and reset, must not undo the agent's.
		c.ok(t, "browser_capture", map[string]any{"selector": "a", "name": "captured.csv"})
		for _, f := range []struct{ selector, name, body, mime string }{
			{"a", "report.csv", reportCSV, "text/csv"},
			{"button", "notes.txt", "my notes", "text/plain"},
		} {
			out, _ := c.ok(t, "browser_click", map[string]any{"selector": f.selector})
			path := filepath.Join(dir, f.name)
			sum := sha256.Sum256([]byte(f.body))
			for _, want := range []string{
				"path: " + path + "\n", fmt.Sprintf("(%d bytes, %s", len(f.body), f.mime), "sha256 " + hex.EncodeToString(sum[:]),
			} {
				if !strings.Contains(out, want) {
					t.Errorf("the click's result lacks %q:\n%s", want, out)
				}
			}
			b, err := os.ReadFile(path)
			if err != nil || string(b) != f.body {
				t.Errorf("%s: %q, %v", path, b, err)
			}
		}
		ents, _ := os.ReadDir(dir)
		if len(ents) != 3 {
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			t.Errorf("the download dir holds %q, want the capture and the two files", names)
		}
	})
}
