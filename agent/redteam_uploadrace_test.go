package agent

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/livetab/livetab/internal/browsertest"
	"github.com/livetab/livetab/policy"
)

// The policy resolves an upload's symlinks when it checks the files, and
// the upload opened the paths again by name afterwards (and, natively,
// Chrome opens them once more). In an upload directory another user may
// write in, a name that flips between a regular file and a symlink to a
// file outside it got the outside file past the check: the page received
// it. Now upload opens each file once, inside the directory, and sends the
// bytes of that file when another user could swap the name before Chrome
// opens it. (A process of the person's own user may read the outside file
// itself: that race is not livetab's to win.)
func TestRedTeamUploadSymlinkRaceAfterCheck(t *testing.T) {
	env := browsertest.Start(t, browsertest.Options{})
	var (
		mu  sync.Mutex
		got []string
	)
	st := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/leak" {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			got = append(got, string(b))
			mu.Unlock()
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>Upload</title><label>Attach <input type="file" id="f"></label>
			<script>
			document.getElementById('f').addEventListener('change', async e => {
				for (const f of e.target.files) {
					let text;
					try { text = await f.text(); } catch (err) { text = 'unreadable ' + err; }
					await fetch('/leak', {method: 'POST', body: f.name + '\n' + text});
				}
				e.target.value = '';
			});
			</script>`)
	}))
	t.Cleanup(st.Close)

	root := t.TempDir()
	up := filepath.Join(root, "uploads")
	if err := os.Mkdir(up, 0o700); err != nil {
		t.Fatal(err)
	}
	// Another user may write in it (a shared folder): they may rename.
	if err := os.Chmod(up, 0o777); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(root, "secret.txt")
	if err := os.WriteFile(outside, []byte("SECRET-OUTSIDE-UPLOADDIR"), 0o600); err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(up, ".real")
	if err := os.WriteFile(real, []byte("harmless notes"), 0o600); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(up, "notes.txt")
	if err := os.Link(real, name); err != nil {
		t.Fatal(err)
	}

	pol := &policy.Policy{AllowDomains: []string{"127.0.0.1"}, UploadDir: up}
	c := &client{connect(t, newServer(t, Options{Browser: env.Allocator(t), Policy: pol}))}
	c.ok(t, "browser_navigate", map[string]any{"url": st.URL + "/"})

	// Another program flips the name, atomically, by rename.
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		tmpL, tmpF := filepath.Join(up, ".l"), filepath.Join(up, ".f")
		for i := 0; !stop.Load(); i++ {
			if i%2 == 0 {
				os.Remove(tmpL)
				os.Symlink(outside, tmpL)
				os.Rename(tmpL, name)
			} else {
				os.Remove(tmpF)
				os.Link(real, tmpF)
				os.Rename(tmpF, name)
			}
			time.Sleep(200 * time.Microsecond)
		}
	}()
	defer func() { stop.Store(true); <-done }()

	var denied, uploaded int
	for i := 0; i < 40; i++ {
		res := c.call(t, "browser_upload", map[string]any{"selector": "#f", "files": []string{"notes.txt"}})
		text := resultText(res)
		if res.IsError {
			denied++
		} else {
			uploaded++
		}
		mu.Lock()
		leaked := false
		for _, g := range got {
			leaked = leaked || strings.Contains(g, "SECRET-OUTSIDE-UPLOADDIR")
		}
		mu.Unlock()
		if leaked {
			stop.Store(true)
			t.Fatalf("try %d: the page received %s, outside the upload directory, through %s that passed the policy's check (%s)", i+1, outside, name, text)
		}
	}
	time.Sleep(time.Second)
	mu.Lock()
	defer mu.Unlock()
	for _, g := range got {
		if strings.Contains(g, "SECRET-OUTSIDE-UPLOADDIR") {
			t.Fatalf("the page received %s, outside the upload directory", outside)
		}
	}
	t.Logf("%d uploaded, %d refused; page got %d files: %q", uploaded, denied, len(got), got)
}
