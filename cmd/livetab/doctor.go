package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab"
	"github.com/livetab/livetab/bridge"
	"github.com/livetab/livetab/extcdp"
	"github.com/livetab/livetab/extension"
)

// report prints doctor's lines: one per check, and the fix under a failure.
type report struct {
	w      io.Writer
	failed bool
}

func (r *report) ok(what, detail string) { fmt.Fprintf(r.w, "ok    %-10s %s\n", what, detail) }

func (r *report) fail(what, detail, fix string) {
	r.failed = true
	fmt.Fprintf(r.w, "FAIL  %-10s %s\n", what, detail)
	fmt.Fprintf(r.w, "      fix: %s\n", fix)
}

func (r *report) skip(what, why string) { fmt.Fprintf(r.w, "skip  %-10s %s\n", what, why) }

func runDoctor(ctx context.Context, args []string) error {
	fs := flags("doctor", "")
	addr := fs.String("addr", "", "the `host:port` livetab serve listens on (default: the running serve's, else "+bridge.DefaultAddr+")")
	if err := parse(fs, args); err != nil {
		return err
	}
	r := &report{w: os.Stdout}

	if exe, err := extension.FindChromium(); err != nil {
		r.fail("chromium", err.Error(),
			"install Chromium (Debian/Ubuntu: apt-get install chromium; macOS: brew install --cask chromium) or set LIVETAB_CHROME to its binary; `livetab serve --chrome PATH` takes one too. Needed for `livetab serve --launch` and the tests")
	} else {
		r.ok("chromium", exe)
	}

	checkTokenFile(r)

	epPath, err := livetab.EndpointFile()
	if err != nil {
		return err
	}
	ep, epErr := livetab.ReadEndpoint(epPath)
	if *addr == "" {
		*addr = bridge.DefaultAddr
		if epErr == nil {
			*addr = strings.TrimPrefix(ep.HTTP, "http://")
		}
	}
	checkPort(ctx, r, *addr, ep, epErr)

	const (
		serveFix = "run `livetab serve` (add --launch to start a Chromium with the extension) and keep it running"
	)
	if epErr != nil {
		if errors.Is(epErr, livetab.ErrNotRunning) {
			r.fail("serve", "no livetab serve is running (no "+epPath+")", serveFix)
		} else {
			r.fail("serve", epErr.Error(), "delete "+epPath+", then "+serveFix)
		}
		r.skip("token", "needs a running serve")
		r.skip("extension", "needs a running serve")
		return r.done()
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	body, err := livetab.Probe(pctx, ep)
	cancel()
	switch {
	case errors.Is(err, livetab.ErrTokenRefused):
		r.ok("serve", fmt.Sprintf("running at %s (pid %d)", ep.HTTP, ep.PID))
		r.fail("token", "the serve holds another token than "+epPath+" (it proved it before the file's token was sent)",
			"run `livetab pair` and paste the token into the extension's popup, then restart `livetab serve` so that it writes the endpoint file again")
		r.skip("extension", "needs the token")
		return r.done()
	case errors.Is(err, livetab.ErrNotRunning):
		r.fail("serve", fmt.Sprintf("the endpoint file names %s (pid %d), but nothing answers there: the serve is gone", ep.HTTP, ep.PID), serveFix)
		r.skip("token", "needs a running serve")
		r.skip("extension", "needs a running serve")
		return r.done()
	case err != nil:
		r.fail("serve", err.Error(), "stop whatever listens at "+ep.HTTP+", delete "+epPath+", then "+serveFix)
		r.skip("token", "needs a running serve")
		r.skip("extension", "needs a running serve")
		return r.done()
	}
	r.ok("serve", fmt.Sprintf("running at %s (pid %d)", ep.HTTP, ep.PID))
	r.ok("token", "accepted")

	var st extcdp.Status
	if err := jsonv2.Unmarshal(body, &st); err != nil {
		r.fail("extension", "the serve's status is unreadable: "+err.Error(), "restart `livetab serve` with this version of livetab")
		return r.done()
	}
	if !st.Connected {
		r.fail("extension", "not connected to the serve",
			"open chrome://extensions and check that livetab is installed and switched on (`livetab extension DIR` writes it; Developer mode → Load unpacked → DIR); "+
				"if its popup says it is not paired or shows another URL, run `livetab pair` and paste the URL ("+ep.BridgeURL()+") and the token into it")
		return r.done()
	}
	r.ok("extension", fmt.Sprintf("connected: livetab %s, %s; %d tab(s), %d client(s)", st.Extension.Version, st.Extension.UserAgent, len(st.Tabs), st.Clients))
	if st.Extension.FileAccess {
		r.ok("files", "the extension may read local files: uploads hand Chrome the file's path, at disk speed, and drops are the browser's own (trusted events)")
	} else {
		r.ok("files", "the extension may not read local files, so uploads send the bytes through the page (slower) and drops are synthetic events (some pages ignore them); "+
			"to allow it: chrome://extensions → livetab → Details → Allow access to file URLs")
	}
	if st.Paused {
		r.fail("paused", "the person paused livetab in the extension's popup: every command that needs a tab fails",
			"press Resume in the livetab popup (the toolbar button shows OFF while paused)")
	}
	return r.done()
}

func (r *report) done() error {
	if r.failed {
		return errFailed
	}
	fmt.Fprintln(r.w, "all good")
	return nil
}

func checkTokenFile(r *report) {
	path, err := bridge.DefaultTokenFile()
	if err != nil {
		r.fail("token file", err.Error(), "set HOME (or XDG_CONFIG_HOME) so that livetab has a config directory")
		return
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.fail("token file", "no token file at "+path,
			"run `livetab pair` (it creates the token) and paste the token into the extension's popup, or write the extension with `livetab extension DIR`")
	case err != nil:
		r.fail("token file", err.Error(), "check the permissions of "+path)
	case runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0:
		r.fail("token file", fmt.Sprintf("%s has mode %#o: other users can read the token", path, fi.Mode().Perm()),
			"chmod 600 "+path)
	default:
		r.ok("token file", path+" (private)")
	}
}

// checkPort reports whether addr is free for a serve, or held by a livetab
// serve, which is fine too; anything else there stops `livetab serve`.
func checkPort(ctx context.Context, r *report, addr string, ep livetab.Endpoint, epErr error) {
	what := "port"
	if err := checkLoopback(addr); err != nil {
		r.fail(what, err.Error(), "use a loopback address such as 127.0.0.1:9339")
		return
	}
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		ln.Close()
		r.ok(what, addr+" is free for livetab serve")
		return
	}
	if epErr == nil && strings.TrimPrefix(ep.HTTP, "http://") == addr {
		// Ask with the token, which keeps a refusal out of the serve's log.
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := livetab.Probe(pctx, ep)
		cancel()
		if err == nil || errors.Is(err, livetab.ErrTokenRefused) {
			r.ok(what, fmt.Sprintf("%s is held by livetab serve (pid %d)", addr, ep.PID))
			return
		}
	}
	if isLivetab(ctx, addr) {
		r.ok(what, addr+" is held by a livetab serve")
		return
	}
	host, port, _ := net.SplitHostPort(addr)
	other := "9340"
	if port == "9340" {
		other = "9341"
	}
	r.fail(what, addr+" is in use by another program, not livetab",
		fmt.Sprintf("stop that program, or run `livetab serve --addr %s` and pair the extension with the new address (`livetab extension --addr %s DIR` or `livetab pair`)",
			net.JoinHostPort(host, other), net.JoinHostPort(host, other)))
}

// isLivetab reports whether a livetab serve listens at addr: without a
// token it answers 401 with a body that names livetab.
func isLivetab(ctx context.Context, addr string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/json/version", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode == http.StatusUnauthorized && strings.HasPrefix(string(b), "livetab:")
}
