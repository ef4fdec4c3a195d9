package page

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// DefaultDownloadWait bounds how long an action waits for the downloads it
// started to finish.
const DefaultDownloadWait = time.Minute

// WithDownloadDir makes the Page's tabs download into dir, and an action
// that starts a download wait for it (up to DefaultDownloadWait) and
// report the file: its path, size, MIME type and SHA-256. Each file takes
// the name the site suggested, made safe and unique in dir.
func WithDownloadDir(dir string) Option {
	return func(c *config) { c.downloadDir = dir }
}

// WithDownloadsDenied makes the Page's tabs download nothing when it has
// no download directory: a download a page starts (on a click, or on its
// own with no click at all) is refused (Browser.setDownloadBehavior deny)
// rather than left to land in the browser's Downloads folder, and the
// action says so. For a program that acts for someone who did not choose
// where its files go, such as an agent on a page that may be hostile.
func WithDownloadsDenied() Option {
	return func(c *config) { c.denyDownloads = true }
}

// Download is a file an action downloaded.
type Download struct {
	URL    string `json:"url"`
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	MIME   string `json:"mime"`
	SHA256 string `json:"sha256"`
}

// download is a download of a tab, from its Browser.download* events.
type download struct {
	seq   uint64
	guid  string
	url   string
	name  string
	state browser.DownloadProgressState
	path  string
}

// setDownloads points the tab's downloads at the download directory.
func (p *Page) setDownloads(t *tab) error {
	dir := p.cfg.downloadDir
	if dir == "" && p.cfg.denyDownloads {
		ctx, cancel := context.WithTimeout(t.ctx, 10*time.Second)
		defer cancel()
		_, err := chromedp.Call(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
			Behavior:      browser.SetDownloadBehaviorBehaviorDeny,
			EventsEnabled: new(true),
		})
		if err != nil {
			return fmt.Errorf("refusing the tab's downloads (Browser.setDownloadBehavior deny): %w", err)
		}
		return nil
	}
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("making the download directory: %w", err)
	}
	if abs, err := filepath.Abs(dir); err == nil {
		p.cfg.downloadDir = abs
	}
	ctx, cancel := context.WithTimeout(t.ctx, 10*time.Second)
	defer cancel()
	_, err := chromedp.Call(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior:      browser.SetDownloadBehaviorBehaviorAllowAndName,
		DownloadPath:  p.cfg.downloadDir,
		EventsEnabled: new(true),
	})
	if err != nil {
		return fmt.Errorf("downloading into %s: %w", p.cfg.downloadDir, err)
	}
	return nil
}

// onDownload records a download event. Call with t.mu held.
func (t *tab) onDownload(ev any) {
	switch ev := ev.(type) {
	case *browser.EventDownloadWillBegin:
		for _, d := range t.downloads {
			if d.guid == ev.GUID {
				return
			}
		}
		t.dlSeq++
		t.downloads = append(t.downloads, &download{seq: t.dlSeq, guid: ev.GUID, url: ev.URL, name: ev.SuggestedFilename})
		if len(t.downloads) > 16 {
			t.downloads = t.downloads[len(t.downloads)-16:]
		}
	case *browser.EventDownloadProgress:
		for _, d := range t.downloads {
			if d.guid == ev.GUID {
				d.state = ev.State
				if ev.FilePath != "" {
					d.path = ev.FilePath
				}
			}
		}
	}
}

// downloadsSince returns the downloads that began after seq.
func (t *tab) downloadsSince(seq uint64) []*download {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*download
	for _, d := range t.downloads {
		if d.seq > seq {
			out = append(out, d)
		}
	}
	return out
}

// finishDownloads waits for the downloads the action started and says what
// became of each.
func (a *action) finishDownloads(dls []*download) string {
	t := a.t
	ctx, cancel := context.WithTimeout(a.ctx, DefaultDownloadWait)
	defer cancel()
	err := t.waitState(ctx, func() bool {
		for _, d := range dls {
			if d.state != browser.DownloadProgressStateCompleted && d.state != browser.DownloadProgressStateCanceled {
				return t.closed
			}
		}
		return true
	})
	var lines []string
	for _, d := range dls {
		t.mu.Lock()
		st, path := d.state, d.path
		t.mu.Unlock()
		switch {
		case st == browser.DownloadProgressStateCompleted:
			if path == "" {
				path = filepath.Join(t.p.cfg.downloadDir, d.guid)
			}
			f, ferr := t.p.keepDownload(d, path)
			if ferr != nil {
				lines = append(lines, fmt.Sprintf("downloaded a file, but %v; its URL:\n%s", ferr, wrapUntrusted(d.url)))
				continue
			}
			a.downloads = append(a.downloads, f)
			// The file's name is the site's: words for the model, as
			// the page's title is, so it goes in a page block.
			lines = append(lines, fmt.Sprintf("downloaded a file (%d bytes, %s, sha256 %s):\n%s", f.Size, f.MIME, f.SHA256, wrapUntrusted("path: "+f.Path+"\nurl: "+f.URL)))
		case st == browser.DownloadProgressStateCanceled && t.p.cfg.downloadDir == "" && t.p.cfg.denyDownloads:
			lines = append(lines, "a download was refused: there is no download directory (the person can set one with --download-dir); its URL:\n"+wrapUntrusted(d.url))
		case st == browser.DownloadProgressStateCanceled:
			lines = append(lines, "a download was canceled; its URL:\n"+wrapUntrusted(d.url))
		case err != nil:
			lines = append(lines, fmt.Sprintf("a download did not finish within %v; it goes on into %s; its URL:\n%s", DefaultDownloadWait, t.p.cfg.downloadDir, wrapUntrusted(d.url)))
		}
	}
	return strings.Join(lines, "; ")
}

// keepDownload gives a finished download the name the site suggested, safe
// and unique in the download directory, and reads its size, type and hash.
func (p *Page) keepDownload(d *download, path string) (Download, error) {
	dir := p.cfg.downloadDir
	name := safeName(d.name)
	dst, err := placeNew(dir, name, func(to string) error { return moveNew(path, to) })
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return Download{}, fmt.Errorf("the file is not at %s: %w", path, err)
		}
		return Download{}, fmt.Errorf("it could not be named %s: %w", name, err)
	}
	f, err := os.Open(dst)
	if err != nil {
		return Download{}, err
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	h := sha256.New()
	h.Write(head[:n])
	size, err := io.Copy(h, f)
	if err != nil {
		return Download{}, err
	}
	typ := mime.TypeByExtension(filepath.Ext(dst))
	if typ == "" {
		typ = http.DetectContentType(head[:n])
	}
	return Download{URL: d.url, Path: dst, Size: size + int64(n), MIME: typ, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// safeName makes a site's suggested file name safe to create: no
// directories, no hidden or empty name, no control characters.
func safeName(s string) string {
	s = filepath.Base(filepath.Clean("/" + s))
	if s == "/" || s == "." {
		s = ""
	}
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '/' || r == '\\' || r == ':' {
			return '_'
		}
		return r
	}, s)
	s = strings.TrimLeft(strings.TrimSpace(s), ".")
	if s == "" {
		s = "download"
	}
	if len(s) > 120 {
		ext := filepath.Ext(s)
		if len(ext) > 20 {
			ext = ""
		}
		s = s[:120-len(ext)] + ext
	}
	return s
}

// placeNew puts a file at dir/name, or dir/name (2).ext… when that is
// taken, with place, which must fail with fs.ErrExist rather than replace
// a file: the name is the site's, and another program sharing dir may take
// a name between any look and the write, so the look is the write itself.
func placeNew(dir, name string, place func(to string) error) (string, error) {
	ext := filepath.Ext(name)
	base := strings.TrimSuffix(name, ext)
	p := filepath.Join(dir, name)
	for i := 2; i < 1000; i++ {
		err := place(p)
		if !errors.Is(err, fs.ErrExist) {
			return p, err
		}
		p = filepath.Join(dir, fmt.Sprintf("%s (%d)%s", base, i, ext))
	}
	return "", fmt.Errorf("%s and 998 more of its name exist: %w", filepath.Join(dir, name), fs.ErrExist)
}

// moveNew moves src to dst, which must not exist: a hard link fails on an
// existing dst in one step; where links are not to be had, a copy into a
// file created new.
func moveNew(src, dst string) error {
	err := os.Link(src, dst)
	if err == nil {
		return os.Remove(src)
	}
	if errors.Is(err, fs.ErrExist) || errors.Is(err, fs.ErrNotExist) {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := writeNew(dst, func(w io.Writer) error { _, err := io.Copy(w, in); return err }); err != nil {
		return err
	}
	in.Close()
	return os.Remove(src)
}

// writeNew creates dst, which must not exist, and fills it with write; a
// failed write leaves no file.
func writeNew(dst string, write func(io.Writer) error) error {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if err := write(out); err != nil {
		out.Close()
		os.Remove(dst)
		return err
	}
	if err := out.Close(); err != nil {
		os.Remove(dst)
		return err
	}
	return nil
}
