// Package upload puts local files, byte slices or readers into a page: into
// a file input, onto a drop zone, or into a paste target. It works on any
// chromedp tab context: a tab of chromedp's ExecAllocator, or a livetab tab
// in a person's own Chrome.
//
// Three paths lead into the page:
//
//   - Native: DOM.setFileInputFiles with local paths. Chrome reads the files
//     itself, so it is the fastest path, but it needs the browser on the
//     same machine and, through livetab, an extension allowed to access
//     file URLs (off by default for Web Store installs).
//
//   - In-page: the bytes are streamed into the page in base64 slices of at
//     most 1 MiB, the page builds File objects (name, type, lastModified)
//     and hands them over through a DataTransfer with the events the page
//     listens to: input and change for a file input, dragenter, dragover and
//     drop for a drop zone, paste for a paste target.
//
//   - Channel, through livetab: the bytes go to livetab's relay over the
//     program's CDP connection, and the extension's transfer page, framed
//     into the tab, fetches them from the relay on 127.0.0.1 and hands the
//     page a Blob, so no byte becomes a string in Chrome: several times
//     the in-page path's speed, for a program on another machine too.
//
// The Auto mode takes the native path for file inputs when every file has
// a path and the browser can read it (plain Chrome, or livetab with file
// access as reported by Livetab.getInfo), then the channel (livetab, files
// of known size, a page that lets the frame load), and falls back to the
// in-page path otherwise. Drops of such files take the native path too:
// the browser drags them (Input.dispatchDragEvent), so the page sees
// trusted events; pastes, and drops of bytes, take the channel or the
// in-page path.
package upload

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Mode chooses how files reach the page.
type Mode int

// The modes.
const (
	// Auto picks Native when it can work and InPage otherwise.
	Auto Mode = iota
	// Native uses DOM.setFileInputFiles with local paths.
	Native
	// InPage streams the bytes and builds the files in the page.
	InPage
	// Channel sends the bytes through the livetab extension's transfer
	// channel: its transfer page, framed into the tab, fetches them from
	// livetab over loopback and hands the page a Blob, so no byte becomes
	// a CDP string. Plain Chrome has none; Auto tries it before InPage.
	Channel
)

// String names the mode.
func (m Mode) String() string {
	switch m {
	case Auto:
		return "auto"
	case Native:
		return "native"
	case InPage:
		return "in-page"
	case Channel:
		return "channel"
	}
	return fmt.Sprintf("mode(%d)", int(m))
}

// Errors an upload can end with; they are wrapped with details, so test
// them with errors.Is.
var (
	// ErrNotFound: no element matches the reference.
	ErrNotFound = errors.New("upload: element not found")
	// ErrNotFileInput: Files was pointed at something that is not a file
	// input and holds no single one.
	ErrNotFileInput = errors.New("upload: not a file input")
	// ErrRejected: the input or the page refused the files (disabled
	// input, accept mismatch, too many files, a size limit the page
	// enforces, a drop zone that takes no drops).
	ErrRejected = errors.New("upload: the page rejected the files")
	// ErrNativeUnavailable: Native was forced but cannot work here.
	ErrNativeUnavailable = errors.New("upload: the native path is not available")
	// ErrTabClosed: the tab closed or navigated away during the upload.
	ErrTabClosed = errors.New("upload: the tab closed during the upload")
)

// File is one file to upload. Make it with Path, Bytes or Reader; the other
// fields may be set afterwards.
type File struct {
	// Name is the file name the page sees.
	Name string
	// MIME is the type the page sees; empty means from the name's
	// extension, else sniffed from the first bytes.
	MIME string
	// ModTime becomes the File's lastModified; zero means the file's
	// modification time for Path, else now.
	ModTime time.Time

	path string
	data []byte
	r    io.Reader
	size int64 // -1 when unknown
}

// Path is a file on the local disk. It can take the native path.
func Path(path string) File {
	return File{Name: filepath.Base(path), path: path, size: -1}
}

// Bytes is a file made of b.
func Bytes(name string, b []byte) File {
	return File{Name: name, data: b, size: int64(len(b))}
}

// Reader is a file read from r, of size bytes (-1 when unknown). It can be
// uploaded once.
func Reader(name string, r io.Reader, size int64) File {
	return File{Name: name, r: r, size: size}
}

// ErrNotRegular reports a path that is no regular file: a directory, a
// FIFO or a device, which an upload would wait on or read forever.
var ErrNotRegular = errors.New("upload: not a regular file")

// ErrOutside reports a file whose real path (its links resolved) is
// outside the directory given to Within.
var ErrOutside = errors.New("upload: outside the directory files may come from")

// ErrChanged reports a file that was replaced, moved or written to while
// the browser read it by its path: the page may hold other bytes.
var ErrChanged = errors.New("upload: the file changed while the browser read it")

// pathFile is a Path file as opened.
type pathFile struct {
	*os.File
	real string      // its real path, the one the browser is given
	info os.FileInfo // as opened
	root *os.Root    // Within's directory, held open: later looks stay in it
	rel  string      // real, from root
}

func (p *pathFile) Close() error {
	if p.root != nil {
		p.root.Close()
	}
	return p.File.Close()
}

// openPath opens f's file once, by its real path (links resolved): the one
// the browser is given, a regular file, not a link swapped in since, and,
// with within set, opened through that directory (os.Root), so that no
// directory on the way swapped for a link takes the open out of it.
func (f File) openPath(within string) (*pathFile, error) {
	abs, err := filepath.Abs(f.path)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return nil, fmt.Errorf("upload: %w", err)
	}
	p := &pathFile{real: abs}
	if within != "" {
		dir, err := filepath.Abs(within)
		if err == nil {
			dir, err = filepath.EvalSymlinks(dir)
		}
		if err != nil {
			return nil, fmt.Errorf("upload: the directory files may come from: %w", err)
		}
		rel, err := filepath.Rel(dir, abs)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
			return nil, fmt.Errorf("%w (%s): %s; copy the file into that directory", ErrOutside, within, f.Name)
		}
		if p.root, err = os.OpenRoot(dir); err != nil {
			return nil, fmt.Errorf("upload: the directory files may come from: %w", err)
		}
		p.rel = rel
		p.File, err = p.root.OpenFile(rel, openFlags, 0)
		if err != nil {
			p.root.Close()
			if strings.Contains(err.Error(), "escapes") {
				return nil, fmt.Errorf("%w (%s): %s: %w", ErrOutside, within, f.Name, err)
			}
			return nil, fmt.Errorf("upload: %w", err)
		}
	} else if p.File, err = os.OpenFile(abs, openFlags, 0); err != nil {
		return nil, fmt.Errorf("upload: %w", err)
	}
	p.info, err = p.File.Stat()
	if err == nil && !p.info.Mode().IsRegular() {
		err = fmt.Errorf("%w: %s is a %s; name a regular file", ErrNotRegular, f.Name, kind(p.info.Mode()))
	}
	if err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

func kind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&os.ModeNamedPipe != 0:
		return "FIFO"
	case m&os.ModeDevice != 0:
		return "device"
	case m&os.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}

// unchanged reports ErrChanged when the file at p's path is no longer the
// one opened: another file, a link, or other bytes. With Within's
// directory the look goes through it.
func (p *pathFile) unchanged(name string) error {
	var now os.FileInfo
	var err error
	if p.root != nil {
		now, err = p.root.Lstat(p.rel)
	} else {
		now, err = os.Lstat(p.real)
	}
	if err != nil || !os.SameFile(now, p.info) || now.Size() != p.info.Size() || !now.ModTime().Equal(p.info.ModTime()) {
		return fmt.Errorf("%w: %s; upload it again", ErrChanged, name)
	}
	return nil
}

// open returns the bytes of a file made with Bytes or Reader, its size (-1
// if unknown) and its modification time; Path files use openPath.
func (f File) open() (io.ReadCloser, int64, time.Time, error) {
	switch {
	case f.data != nil:
		return io.NopCloser(bytes.NewReader(f.data)), int64(len(f.data)), time.Time{}, nil
	case f.r != nil:
		return io.NopCloser(f.r), f.size, time.Time{}, nil
	}
	return io.NopCloser(bytes.NewReader(nil)), 0, time.Time{}, nil
}

// mimeOf is the type a file is announced with: the caller's, the
// extension's, or sniffed from head.
func (f File) mimeOf(head []byte) string {
	if f.MIME != "" {
		return f.MIME
	}
	if t := mime.TypeByExtension(filepath.Ext(f.Name)); t != "" {
		return t
	}
	if head != nil {
		return http.DetectContentType(head)
	}
	return ""
}

// Result describes a finished upload.
type Result struct {
	// Mode is the path taken: Native, Channel or InPage. For a drop,
	// Native means the browser dragged the files (trusted events), the
	// others synthetic events (isTrusted false).
	Mode Mode
	// Files are the files as the page sees them.
	Files []FileResult
	// Fallback says why Auto did not take the native path or the
	// channel, when it did not.
	Fallback string
}

// FileResult is one uploaded file.
type FileResult struct {
	Name         string
	MIME         string
	Size         int64
	LastModified int64 // milliseconds since the epoch, as in JavaScript
	// SHA256 is the lowercase hex SHA-256 of the bytes sent.
	SHA256 string
}

// Progress reports an upload's advance over all its files. Total is -1
// when a reader's size is unknown.
type Progress struct {
	File  int // index of the file being sent
	Name  string
	Done  int64 // bytes of all files sent so far
	Total int64
}

// MaxChunk is the largest slice of bytes moved per message.
const MaxChunk = 1 << 20

// Option configures an upload.
type Option func(*config)

type config struct {
	within   string
	mode     Mode
	progress func(Progress)
	chunk    int
	settle   time.Duration
	onSet    func()
}

// Within takes Path files only from dir: a file whose real path (its links
// resolved) is elsewhere fails with ErrOutside. The path checked is the
// one opened and the one the browser is given; a file swapped for another
// while the browser reads it fails with ErrChanged.
func Within(dir string) Option { return func(c *config) { c.within = dir } }

// WithMode forces a path; the default is Auto.
func WithMode(m Mode) Option { return func(c *config) { c.mode = m } }

// OnProgress calls f after each slice; f must return quickly.
func OnProgress(f func(Progress)) Option { return func(c *config) { c.progress = f } }

// ChunkSize sets the bytes moved per message, at most MaxChunk.
func ChunkSize(n int) Option {
	return func(c *config) {
		if n > 0 && n <= MaxChunk {
			c.chunk = n
		}
	}
}

// OnSet calls f once the files are in a file input (set natively or
// assigned), before the wait for the page's reaction (Settle): a caller
// that watches the page itself can count its reaction from there. Drops and
// pastes do not call it. A caller that waits for the page's reaction in f
// itself sets Settle(0): the check for a rejection then follows f at once.
func OnSet(f func()) Option { return func(c *config) { c.onSet = f } }

// Settle sets how long the page has to react to new files (and reject
// them) before the upload reports success. Default 100 ms.
func Settle(d time.Duration) Option { return func(c *config) { c.settle = d } }

func (c *config) set() {
	if c.onSet != nil {
		c.onSet()
	}
}
