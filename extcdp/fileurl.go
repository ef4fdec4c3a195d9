package extcdp

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// statTimeout bounds the look at a file: URL's file: a path on a file
// system that does not answer is refused rather than wait.
const statTimeout = 2 * time.Second

// stats bounds the looks still running: one on a file system that does not
// answer never ends, and a client that sent command after command there
// left a goroutine behind for each. Past the bound the relay refuses at
// once, as it would after the wait.
var stats = make(chan struct{}, 8)

// fileURLRefusal says why the relay refuses to have Chrome load the file: URL
// u, or "" when it does not. Chrome's file loader opens the file in the
// browser, and a FIFO that no one writes holds that open for good: the tab
// then answered no debugger, the person's own DevTools included, until the
// person navigated it away, and the client's Page.navigate was never
// answered (red team, 4 of 4; Chrome does the same for its own port). A
// device, a socket or another special file is no page either. The relay runs
// on the browser's machine (the bridge listens on loopback only), so it
// looks at the file first: only a regular file or a directory, or a path
// that does not exist or cannot be read (Chrome shows its error page at
// once), is loaded.
func fileURLRefusal(u string) string {
	path, ok := fileURLPath(u)
	if !ok {
		return ""
	}
	type result struct {
		fi  fs.FileInfo
		err error
	}
	hung := fmt.Sprintf("livetab refuses to load %q: its file system did not answer within %v, and Chrome would wait for it with the tab answering nothing; try again once the file system answers", u, statTimeout)
	select {
	case stats <- struct{}{}:
	default:
		return hung
	}
	done := make(chan result, 1)
	go func() {
		defer func() { <-stats }()
		fi, err := os.Stat(path) // follows links, as Chrome's open does
		done <- result{fi, err}
	}()
	var res result
	select {
	case res = <-done:
	case <-time.After(statTimeout):
		return hung
	}
	if res.err != nil {
		return ""
	}
	switch m := res.fi.Mode(); {
	case m.IsRegular(), m.IsDir():
		return ""
	default:
		return fmt.Sprintf("livetab refuses to load %q: %s is a %s, not a regular file or a directory: Chrome opens the file in the browser, and one that never opens (a pipe no one writes) leaves the tab answering no debugger until the person navigates it away; copy what it holds into a regular file and load that", u, path, fileKind(m))
	}
}

// fileURLPath is the local path a file: URL names, as Chrome reads it:
// backslashes are slashes, the host (localhost or none) is not part of it,
// and the path is percent-decoded.
func fileURLPath(u string) (string, bool) {
	scheme, rest, ok := urlScheme(u)
	if !ok || scheme != "file" {
		return "", false
	}
	rest = strings.ReplaceAll(rest, `\`, "/")
	rest, _, _ = strings.Cut(rest, "#")
	rest, _, _ = strings.Cut(rest, "?")
	host := ""
	if after, ok := strings.CutPrefix(rest, "//"); ok {
		// file://host/path: the path starts at the host's end.
		host, rest = after, "/"
		if i := strings.IndexByte(after, '/'); i >= 0 {
			host, rest = after[:i], after[i:]
		}
	}
	// A malformed escape stays as it is, as for Chrome: a segment with one
	// followed by ".." (file:///tmp/%zz/../fifo) names the file all the
	// same, where url.PathUnescape gave up and the file went unseen.
	p := string(percentDecode(rest))
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // file:tmp/x is file:///tmp/x
	}
	if runtime.GOOS == "windows" {
		if host != "" && !strings.EqualFold(host, "localhost") {
			// A share, or the pipes' own namespace (file://./pipe/x).
			return `\\` + host + filepath.Clean(filepath.FromSlash(p)), true
		}
		if len(p) >= 3 && p[2] == ':' {
			p = p[1:] // /C:/x
		}
	}
	return filepath.Clean(filepath.FromSlash(p)), true
}

func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	default:
		return "special file"
	}
}
