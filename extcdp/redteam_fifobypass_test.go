//go:build unix

package extcdp_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRedTeamFIFOBypassHoldsNoPersonsTab: the relay refuses Page.navigate
// and Target.createTarget to a file: URL of a FIFO (fileurl.go). Client A
// gets the person's shared tab, which client B uses too, to open a FIFO no
// one writes by other ways: a spelling fileURLPath cannot decode (a
// malformed %-escape in a segment that Chrome's own ".." then removes), a
// file: page sending itself there (Runtime.evaluate, a javascript: URL, a
// link of Chrome's directory listing), an iframe of a file: page, and
// Page.reload of a file: page whose file became a FIFO after it loaded.
// Each case: does B (and the person's own port) still get an answer?
func TestRedTeamFIFOBypassHoldsNoPersonsTab(t *testing.T) {
	dir := t.TempDir()
	mkfifo := func(name string) string {
		p := filepath.Join(dir, name)
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fileURL := func(p string) string { return "file://" + (&url.URL{Path: p}).EscapedPath() }
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plain := write("plain.html", "<title>plain</title>plain")
	os.Mkdir(filepath.Join(dir, "sub"), 0o700)
	for _, tc := range []struct {
		name string
		// act is what A does on its session of the person's tab; it
		// returns the FIFO the tab should now wait on.
		act func(t *testing.T, a *rawClient, sa string) string
	}{
		{"navigateMalformedEscape", func(t *testing.T, a *rawClient, sa string) string {
			f := mkfifo("fifo1.html")
			u := "file://" + dir + "/sub/%zz/../../fifo1.html"
			r, err := a.send(sa, "Page.navigate", map[string]any{"url": u})
			t.Logf("Page.navigate %s: %s %v %v", u, r.Result, r.Error, err)
			return f
		}},
		{"evaluateLocationFromFilePage", func(t *testing.T, a *rawClient, sa string) string {
			f := mkfifo("fifo2.html")
			a.must(sa, "Page.navigate", map[string]any{"url": fileURL(plain)})
			a.eval(sa, `document.readyState === 'complete' || new Promise(r => onload = r)`)
			r, err := a.send(sa, "Runtime.evaluate", map[string]any{"expression": "location.href = " + jsq(fileURL(f)) + "; 1"})
			t.Logf("Runtime.evaluate location = %s: %s %v %v", fileURL(f), r.Result, r.Error, err)
			return f
		}},
		{"javascriptURLFromFilePage", func(t *testing.T, a *rawClient, sa string) string {
			f := mkfifo("fifo3.html")
			a.must(sa, "Page.navigate", map[string]any{"url": fileURL(plain)})
			a.eval(sa, `document.readyState === 'complete' || new Promise(r => onload = r)`)
			u := "javascript:location.href=" + jsq(fileURL(f))
			r, err := a.send(sa, "Page.navigate", map[string]any{"url": u})
			t.Logf("Page.navigate %s: %s %v %v", u, r.Result, r.Error, err)
			return f
		}},
		{"directoryListingLink", func(t *testing.T, a *rawClient, sa string) string {
			d := filepath.Join(dir, "listing")
			os.Mkdir(d, 0o700)
			f := filepath.Join(d, "fifo4.html")
			if err := syscall.Mkfifo(f, 0o600); err != nil {
				t.Fatal(err)
			}
			a.must(sa, "Page.navigate", map[string]any{"url": fileURL(d) + "/"})
			got := a.eval(sa, `new Promise(r => { const f = () => { const l = [...document.querySelectorAll('a')].find(a => a.href.includes('fifo4')); l ? (l.click(), r('clicked ' + l.href)) : setTimeout(f, 50) }; f() })`)
			t.Logf("listing: %s", got)
			return f
		}},
		{"iframeOfFilePage", func(t *testing.T, a *rawClient, sa string) string {
			f := mkfifo("fifo5.html")
			page := write("framer.html", `<title>framer</title><iframe src="fifo5.html"></iframe>`)
			r, err := a.send(sa, "Page.navigate", map[string]any{"url": fileURL(page)})
			t.Logf("Page.navigate %s: %s %v %v", fileURL(page), r.Result, r.Error, err)
			return f
		}},
		{"navigateNULEscape", func(t *testing.T, a *rawClient, sa string) string {
			f := mkfifo("fifo6")
			u := fileURL(f) + "%00.html"
			r, err := a.send(sa, "Page.navigate", map[string]any{"url": u})
			t.Logf("Page.navigate %s: %s %v %v", u, r.Result, r.Error, err)
			return f
		}},
		{"navigateEncodedSlashThroughSymlink", func(t *testing.T, a *rawClient, sa string) string {
			os.MkdirAll(filepath.Join(dir, "other", "deep"), 0o700)
			f := filepath.Join(dir, "other", "fifo7.html")
			if err := syscall.Mkfifo(f, 0o600); err != nil {
				t.Fatal(err)
			}
			os.Symlink(filepath.Join(dir, "other", "deep"), filepath.Join(dir, "x"))
			// Lexically dir/fifo7.html (missing); the kernel goes through x.
			u := fileURL(dir) + "/x%2F..%2Ffifo7.html"
			r, err := a.send(sa, "Page.navigate", map[string]any{"url": u})
			t.Logf("Page.navigate %s: %s %v %v", u, r.Result, r.Error, err)
			return f
		}},
		{"reloadSwappedFile", func(t *testing.T, a *rawClient, sa string) string {
			p := write("swap.html", "<title>swap</title>swap")
			a.must(sa, "Page.navigate", map[string]any{"url": fileURL(p)})
			a.eval(sa, `document.readyState === 'complete' || new Promise(r => onload = r)`)
			os.Remove(p)
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
			r, err := a.send(sa, "Page.reload", map[string]any{})
			t.Logf("Page.reload: %s %v %v", r.Result, r.Error, err)
			return p
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b, sa, sb := sharedTab(t, "/form?fifo-bypass-"+tc.name)
			a.bound, b.bound = 8*time.Second, 8*time.Second
			var id string
			for _, ts := range env.Relay.Status().Tabs {
				if strings.Contains(ts.URL, "fifo-bypass-"+tc.name) {
					id = ts.TargetID
				}
			}
			var fifo string
			// Runs first: whoever waits in open() on the FIFO gets its end.
			t.Cleanup(func() {
				for range 20 {
					if fd, err := syscall.Open(fifo, syscall.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
						syscall.Close(fd)
					}
					time.Sleep(50 * time.Millisecond)
				}
			})
			fifo = tc.act(t, a, sa)
			time.Sleep(1500 * time.Millisecond)
			v, err := b.evalJSON(sb, "location.href")
			t.Logf("B's Runtime.evaluate after A: %s %v", v, err)
			pv, perr := onPersonTab(id, "Runtime.evaluate", map[string]any{"expression": "location.href", "returnByValue": true})
			t.Logf("the person's port: %.200s %v", pv, perr)
			// A reader in open() on the FIFO is what holds the tab.
			fd, oerr := syscall.Open(fifo, syscall.O_WRONLY|syscall.O_NONBLOCK, 0)
			if oerr == nil {
				syscall.Close(fd)
			}
			t.Logf("someone held the FIFO open for reading: %v", oerr == nil)
			if err != nil || perr != nil {
				t.Errorf("%s: the person's tab answered no debugger (B: %v; the person's port: %v); the FIFO had a reader: %v", tc.name, err, perr, oerr == nil)
			}
		})
	}
}

func jsq(s string) string { return "'" + strings.ReplaceAll(s, "'", `\'`) + "'" }

// onPersonTab sends a command to target id through the person's own
// debugging port, within 8 s.
func onPersonTab(id, method string, params any) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	u, err := env.User(ctx)
	if err != nil {
		return "", err
	}
	defer u.Close()
	res, err := u.Call(ctx, "Target.attachToTarget", map[string]any{"targetId": id, "flatten": true})
	if err != nil {
		return "", err
	}
	r, err := u.CallSession(ctx, field(res, "sessionId"), method, params)
	return string(r), err
}
