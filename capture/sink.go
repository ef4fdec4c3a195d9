package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Meta is what is known of an asset when its first bytes arrive.
type Meta struct {
	// Name is the proposed file name; its extension matches MIME.
	Name string
	// MIME is the type sniffed from the first bytes.
	MIME string
	// Size is the expected size, -1 when unknown.
	Size int64
	// Source is the URL of the bytes ("" for a canvas).
	Source string
	// Rung is the rung that produces the bytes.
	Rung Rung
}

// Sink is where captured bytes go; a host application implements it to
// keep assets its own way.
type Sink interface {
	// Create starts a new asset.
	Create(ctx context.Context, m Meta) (Asset, error)
}

// Asset receives one capture's bytes in order. Exactly one of Commit or
// Abort is called after the writes.
type Asset interface {
	io.Writer
	// Commit makes the asset final once every byte is written; r is the
	// finished result (Location not yet set). It returns where the asset
	// now is, for Result.Location.
	Commit(r *Result) (location string, err error)
	// Abort discards what was written: the capture failed or was
	// cancelled.
	Abort() error
}

// Dir is a Sink that writes each asset into the directory as a file named
// after the asset (adding " (2)", " (3)"... rather than overwriting). Bytes
// go to a hidden ".part" file first, renamed only once complete, so a
// failed capture never leaves a file that looks whole.
func Dir(dir string) Sink { return dirSink{dir} }

type dirSink struct{ dir string }

func (d dirSink) Create(ctx context.Context, m Meta) (Asset, error) {
	if err := os.MkdirAll(d.dir, 0o755); err != nil {
		return nil, fmt.Errorf("capture: creating the output directory: %w", err)
	}
	f, err := os.CreateTemp(d.dir, ".livetab-capture-*.part")
	if err != nil {
		return nil, fmt.Errorf("capture: creating a file in %s: %w", d.dir, err)
	}
	return &fileAsset{f: f, dir: d.dir}, nil
}

// File is a Sink that writes one asset to path, replacing any file there
// only once the capture is complete.
func File(path string) Sink { return fileSink{path} }

type fileSink struct{ path string }

func (s fileSink) Create(ctx context.Context, m Meta) (Asset, error) {
	dir := filepath.Dir(s.path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("capture: creating the output directory: %w", err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(s.path)+".*.part")
	if err != nil {
		return nil, fmt.Errorf("capture: creating %s: %w", s.path, err)
	}
	return &fileAsset{f: f, path: s.path}, nil
}

type fileAsset struct {
	f    *os.File
	dir  string // Dir sink: name chosen at commit
	path string // File sink: fixed name
}

func (a *fileAsset) Write(p []byte) (int, error) { return a.f.Write(p) }

func (a *fileAsset) Commit(r *Result) (string, error) {
	tmp := a.f.Name()
	if err := a.f.Sync(); err != nil {
		a.Abort()
		return "", fmt.Errorf("capture: writing %s: %w", tmp, err)
	}
	if err := a.f.Close(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("capture: writing %s: %w", tmp, err)
	}
	if a.path != "" {
		if err := os.Rename(tmp, a.path); err != nil {
			os.Remove(tmp)
			return "", fmt.Errorf("capture: renaming to %s: %w", a.path, err)
		}
		return a.path, nil
	}
	base := safeName(r.Name)
	ext := filepath.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	for i := 1; ; i++ {
		name := base
		if i > 1 {
			name = stem + " (" + strconv.Itoa(i) + ")" + ext
		}
		final := filepath.Join(a.dir, name)
		// A hard link fails when the name is taken, where a rename would
		// overwrite another capture's file.
		err := os.Link(tmp, final)
		if err == nil {
			os.Remove(tmp)
			return final, nil
		}
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		// No hard links on this file system: check, then rename.
		if _, serr := os.Lstat(final); serr == nil {
			continue
		}
		if err := os.Rename(tmp, final); err != nil {
			os.Remove(tmp)
			return "", fmt.Errorf("capture: renaming to %s: %w", final, err)
		}
		return final, nil
	}
}

func (a *fileAsset) Abort() error {
	a.f.Close()
	return os.Remove(a.f.Name())
}

// Writer is a Sink that streams every asset into w. It cannot take back
// bytes of a failed capture: check the error before using what w got.
func Writer(w io.Writer) Sink { return writerSink{w} }

type writerSink struct{ w io.Writer }

func (s writerSink) Create(ctx context.Context, m Meta) (Asset, error) {
	return writerAsset(s), nil
}

type writerAsset struct{ w io.Writer }

func (a writerAsset) Write(p []byte) (int, error)      { return a.w.Write(p) }
func (a writerAsset) Commit(r *Result) (string, error) { return "", nil }
func (a writerAsset) Abort() error                     { return nil }

// safeName makes name usable as a file name on any common file system.
func safeName(name string) string {
	name = strings.Map(func(r rune) rune {
		switch {
		case r < 0x20, r == 0x7f:
			return -1
		case strings.ContainsRune(`/\:*?"<>|`, r):
			return '_'
		}
		return r
	}, name)
	name = strings.Trim(name, " .")
	if len(name) > 200 {
		ext := filepath.Ext(name)
		if len(ext) > 16 {
			ext = ""
		}
		name = strings.ToValidUTF8(name[:200-len(ext)], "") + ext
	}
	if name == "" {
		name = "capture"
	}
	return name
}
