package upload

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/internal/hit"
	"github.com/livetab/livetab/livetabcdp"
)

// Files puts files into the file input r refers to (or the label of one, or
// an element holding exactly one) and fires the events a person's choice
// fires. It refuses, before sending anything, a disabled input, several
// files for a single-file input and files outside its accept list; and it
// reports a rejection the page signals on the input afterwards (a custom
// validity message, as pages do for size limits). ctx is a chromedp tab
// context.
func Files(ctx context.Context, r Ref, files []File, opts ...Option) (*Result, error) {
	return run(ctx, opInput, r, files, opts)
}

// Drop drops files onto the element r refers to, as a drag from the
// desktop would: dragenter, dragover and drop events carrying a
// DataTransfer with the files. An element whose dragover nobody cancels
// does not take drops, and Drop fails with ErrRejected, as it would for a
// person.
//
// When every file is a path the browser can read (as for Files' native
// path), the browser itself drags them over the element's center
// (Input.dispatchDragEvent): the page sees trusted events (isTrusted), as
// from a person's mouse, and Result.Mode is Native. Otherwise, or when that
// drag does not reach the element, the bytes are streamed into the page and
// the events are synthetic (isTrusted false; Mode InPage, Fallback says
// why). A page that takes the dragover but not the drop gets the browser's
// default action for a dropped file, as from a person.
func Drop(ctx context.Context, r Ref, files []File, opts ...Option) (*Result, error) {
	return run(ctx, opDrop, r, files, opts)
}

// Paste pastes files into the element r refers to, as a paste from the
// clipboard would: a paste event whose clipboardData holds the files. Paste
// always streams the bytes into the page.
func Paste(ctx context.Context, r Ref, files []File, opts ...Option) (*Result, error) {
	return run(ctx, opPaste, r, files, opts)
}

type op int

const (
	opInput op = iota
	opDrop
	opPaste
)

// pageDepth is how many slices are in flight into the page at once.
const pageDepth = 3

// prepared is a file opened for sending.
type prepared struct {
	f    File
	path *pathFile // a Path file as opened; nil for the others
	rc   io.ReadCloser
	br   *bufio.Reader
	size int64
	mod  time.Time
	mime string
}

// pageFile is a file as the page describes it.
type pageFile struct {
	Name         string `json:"name"`
	Type         string `json:"type"`
	Size         int64  `json:"size"`
	LastModified int64  `json:"lastModified"`
}

func run(ctx context.Context, o op, r Ref, files []File, opts []Option) (*Result, error) {
	cfg := config{chunk: MaxChunk, settle: 100 * time.Millisecond}
	for _, opt := range opts {
		opt(&cfg)
	}
	if len(files) == 0 {
		return nil, errors.New("upload: no files given")
	}
	if o == opPaste && cfg.mode == Native {
		return nil, fmt.Errorf("%w: pastes carry bytes, not paths; use Auto or InPage", ErrNativeUnavailable)
	}
	var res *Result
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		var err error
		res, err = upload(ctx, t, o, r, files, &cfg)
		return err
	}))
	if err != nil {
		return nil, tabErr(err)
	}
	return res, nil
}

func upload(ctx context.Context, t *chromedp.Target, o op, r Ref, files []File, cfg *config) (*Result, error) {
	group := newGroup()
	defer releaseGroup(t, group)
	// Whether the browser may read the files by path is asked of the
	// extension while the page is asked about the element: one round trip
	// less to wait for.
	nativeOK := func() error { return nativeAllowed(ctx, t, files) }
	if o != opPaste && cfg.mode != InPage && cfg.mode != Channel {
		ch := make(chan error, 1)
		go func() { ch <- nativeAllowed(ctx, t, files) }()
		var once sync.Once
		var nerr error
		nativeOK = func() error {
			once.Do(func() { nerr = <-ch })
			return nerr
		}
	}
	l, el, err := resolve(ctx, t, r, group)
	if err != nil {
		return nil, err
	}

	ps := make([]*prepared, len(files))
	defer func() {
		for _, p := range ps {
			if p != nil {
				p.rc.Close()
			}
		}
	}()
	metas := make([]map[string]string, len(files))
	for i, f := range files {
		var p *prepared
		if f.path != "" {
			pf, err := f.openPath(cfg.within)
			if err != nil {
				return nil, err
			}
			p = &prepared{f: f, path: pf, rc: pf, size: pf.info.Size(), mod: pf.info.ModTime()}
		} else {
			rc, size, mod, err := f.open()
			if err != nil {
				return nil, err
			}
			p = &prepared{f: f, rc: rc, size: size, mod: mod}
		}
		p.br = bufio.NewReaderSize(p.rc, 4096)
		ps[i] = p
		head, _ := p.br.Peek(512)
		p.mime = f.mimeOf(head)
		if !f.ModTime.IsZero() {
			p.mod = f.ModTime
		} else if p.mod.IsZero() {
			p.mod = time.Now()
		}
		metas[i] = map[string]string{"name": f.Name, "type": p.mime}
	}

	// The browser opens a native file by its path, after the checks here:
	// a file another user may swap for a link goes as bytes instead.
	pathsOK := nativeOK
	nativeOK = func() error {
		if err := pathsOK(); err != nil {
			return err
		}
		for _, p := range ps {
			if p.path == nil {
				continue
			}
			if dir := othersMayChange(p.path.real); dir != "" {
				return fmt.Errorf("%w: %s is in %s, which another user may change: the browser would open it by its path after the check, so its bytes are sent from the file as opened", ErrNativeUnavailable, p.f.Name, dir)
			}
		}
		return nil
	}

	if o == opInput {
		// check finds the file input el stands for (it, its label, or the
		// one input inside it) as input does, and refuses what the input
		// would refuse.
		if err := l.Call(ctx, "check", nil, obj(el), val(metas)); err != nil {
			return nil, fmt.Errorf("upload: %s: %w", r, err)
		}
		if el, err = l.Ref(ctx, "input", obj(el)); err != nil {
			return nil, err
		}
		res := &Result{}
		switch mode := cfg.mode; {
		case mode == Native:
			if err := nativeOK(); err != nil {
				return nil, err
			}
			if err := native(ctx, t, el, ps); err != nil {
				return nil, fmt.Errorf("%w: %w", ErrNativeUnavailable, err)
			}
			return finishNative(ctx, l, el, ps, cfg)
		case mode == Auto:
			err := nativeOK()
			if err == nil {
				err = native(ctx, t, el, ps)
				if err == nil {
					return finishNative(ctx, l, el, ps, cfg)
				}
				if ctx.Err() != nil || errors.Is(tabErr(err), ErrTabClosed) {
					return nil, tabErr(err)
				}
			}
			res.Fallback = err.Error()
		}
		ids, sums, mode, why, err := deliver(ctx, t, l, ps, cfg)
		if err != nil {
			return nil, err
		}
		res.Fallback = joinWhy(res.Fallback, why)
		var given []pageFile
		if err := l.Call(ctx, "assign", &given, obj(el), val(ids)); err != nil {
			return nil, fmt.Errorf("upload: %s: %w", r, err)
		}
		cfg.set()
		if err := l.Call(ctx, "verify", nil, obj(el), val(cfg.settle.Milliseconds())); err != nil {
			return nil, fmt.Errorf("upload: %s: %w", r, err)
		}
		res.Mode = mode
		res.Files = results(given, sums)
		return res, nil
	}

	var fallback string
	if o == opDrop && (cfg.mode == Auto || cfg.mode == Native) {
		err := nativeOK()
		if err == nil {
			var res *Result
			res, err = nativeDrop(ctx, t, l, el, r, ps, cfg)
			if err == nil || ctx.Err() != nil || errors.Is(err, ErrRejected) || errors.Is(tabErr(err), ErrTabClosed) {
				return res, tabErr(err)
			}
		}
		if cfg.mode == Native {
			return nil, err
		}
		fallback = err.Error()
	}
	if cfg.mode == Native {
		return nil, fmt.Errorf("%w: pastes carry bytes, not paths", ErrNativeUnavailable)
	}
	ids, sums, mode, why, err := deliver(ctx, t, l, ps, cfg)
	if err != nil {
		return nil, err
	}
	fallback = joinWhy(fallback, why)
	var out struct {
		Accepted bool       `json:"accepted"`
		Files    []pageFile `json:"files"`
	}
	name := "drop"
	if o == opPaste {
		name = "paste"
	}
	if err := l.Call(ctx, name, &out, obj(el), val(ids), val(cfg.settle.Milliseconds())); err != nil {
		return nil, fmt.Errorf("upload: %s: %w", r, err)
	}
	if o == opDrop && !out.Accepted {
		return nil, fmt.Errorf("%w: %s cancelled dragover but not drop, so the page did not handle the files (a browser would open them instead)", ErrRejected, r)
	}
	return &Result{Mode: mode, Files: results(out.Files, sums), Fallback: fallback}, nil
}

// joinWhy joins the reasons the faster paths were skipped.
func joinWhy(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "; " + b
}

// dragState is how the page took a drag the browser delivered.
type dragState struct {
	Over         bool       `json:"over"`
	Accepted     bool       `json:"accepted"`
	Inside       bool       `json:"inside"`
	Dropped      bool       `json:"dropped"`
	DropAccepted bool       `json:"dropAccepted"`
	Files        []pageFile `json:"files"`
}

// nativeDrop has the browser drag the files (by path) over el's center and
// drop them there, with the trusted events of a person's drag. It drops
// only once el took the dragover; otherwise it cancels the drag, so that
// the browser never opens the files in the tab.
func nativeDrop(ctx context.Context, t *chromedp.Target, l *lib, el runtime.RemoteObjectID, r Ref, ps []*prepared, cfg *config) (*Result, error) {
	paths, err := absPaths(ps)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNativeUnavailable, err)
	}
	var at struct {
		X float64 `json:"clientX"`
		Y float64 `json:"clientY"`
	}
	if err := l.Call(ctx, "dragWatch", &at, obj(el)); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNativeUnavailable, err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		l.Call(sctx, "dragStop", nil)
		cancel()
	}()
	// A frame over the drop zone (a hostile page's transparent frame of
	// another site) would get the files: the browser's own hit test says
	// (internal/hit); the page's, which the page may answer as it likes,
	// does not count. Then the synthetic drop, sent to the zone alone.
	if n, ok, err := hit.At(ctx, t, at.X, at.Y); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNativeUnavailable, err)
	} else if ok && n.Owner() {
		return nil, fmt.Errorf("%w: the frame %s covers %s at (%.0f, %.0f)", ErrNativeUnavailable, n, r, at.X, at.Y)
	}
	data := &input.DragData{Items: []*input.DragDataItem{}, Files: paths, DragOperationsMask: 1}
	drag := func(typ input.DispatchDragEventType) error {
		_, err := cdp.Call(ctx, t, input.DispatchDragEvent, input.DispatchDragEventParams{Type: typ, X: at.X, Y: at.Y, Data: data})
		if err != nil {
			return fmt.Errorf("%w: Input.dispatchDragEvent %s: %w", ErrNativeUnavailable, typ, err)
		}
		return nil
	}
	cancelDrag := func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		cdp.Call(cctx, t, input.DispatchDragEvent, input.DispatchDragEventParams{Type: input.DispatchDragEventTypeDragCancel, X: at.X, Y: at.Y, Data: data})
		cancel()
	}
	if err := drag(input.DispatchDragEventTypeDragEnter); err != nil {
		return nil, err
	}
	if err := drag(input.DispatchDragEventTypeDragOver); err != nil {
		cancelDrag()
		return nil, err
	}
	var st dragState
	if err := l.Call(ctx, "dragState", &st, val(0)); err != nil {
		cancelDrag()
		return nil, err
	}
	switch {
	case !st.Over || !st.Inside:
		cancelDrag()
		return nil, fmt.Errorf("%w: the browser's drag at (%.0f, %.0f) did not reach %s (covered by another element, or off screen)", ErrNativeUnavailable, at.X, at.Y, r)
	case !st.Accepted:
		cancelDrag()
		return nil, fmt.Errorf("%w: %s does not take drops: nothing cancelled its dragover event; point at the drop zone itself", ErrRejected, r)
	}
	if err := drag(input.DispatchDragEventTypeDrop); err != nil {
		return nil, err
	}
	if err := l.Call(ctx, "dragState", &st, val(cfg.settle.Milliseconds())); err != nil {
		return nil, err
	}
	if !st.Dropped {
		return nil, fmt.Errorf("%w: the browser's drop did not reach %s", ErrNativeUnavailable, r)
	}
	if !st.DropAccepted {
		return nil, fmt.Errorf("%w: %s took the dragover but not the drop, so the page did not handle the files", ErrRejected, r)
	}
	sums, err := hashAll(ps, cfg)
	if err == nil {
		err = readUnchanged(ps)
	}
	if err != nil {
		return nil, err
	}
	return &Result{Mode: Native, Files: results(st.Files, sums)}, nil
}

// absPaths are the paths the browser reads: each file's real path, as
// opened (openPath), and still the file opened.
func absPaths(ps []*prepared) ([]string, error) {
	paths := make([]string, len(ps))
	for i, p := range ps {
		if p.path == nil {
			return nil, fmt.Errorf("%s is not a file on disk", p.f.Name)
		}
		if err := p.path.unchanged(p.f.Name); err != nil {
			return nil, err
		}
		paths[i] = p.path.real
	}
	return paths, nil
}

// readUnchanged reports ErrChanged for a file the browser read by its path
// that is no longer the one opened and hashed.
func readUnchanged(ps []*prepared) error {
	for _, p := range ps {
		if p.path != nil {
			if err := p.path.unchanged(p.f.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

func results(seen []pageFile, sums []string) []FileResult {
	out := make([]FileResult, len(seen))
	for i, f := range seen {
		out[i] = FileResult{Name: f.Name, MIME: f.Type, Size: f.Size, LastModified: f.LastModified}
		if i < len(sums) {
			out[i].SHA256 = sums[i]
		}
	}
	return out
}

// nativeAllowed says whether DOM.setFileInputFiles can read these files:
// they must all be paths, and a livetab extension must have file access.
// A browser that does not know Livetab.getInfo is a plain Chrome with full
// CDP, assumed to run on this machine.
func nativeAllowed(ctx context.Context, t *chromedp.Target, files []File) error {
	for _, f := range files {
		if f.path == "" {
			return fmt.Errorf("%w: %s is not a file on disk", ErrNativeUnavailable, f.Name)
		}
	}
	info, err := cdp.Call(ctx, t, livetabcdp.GetInfo, cdp.Empty{})
	if err != nil {
		if livetabcdp.IsUnsupported(err) {
			return nil
		}
		return fmt.Errorf("%w: asking the extension for file access: %w", ErrNativeUnavailable, err)
	}
	if !info.FileAccess {
		return fmt.Errorf("%w: the livetab extension may not read local files; turn on \"Allow access to file URLs\" in its details at chrome://extensions, or let the upload stream the bytes (Auto, InPage)", ErrNativeUnavailable)
	}
	return nil
}

func native(ctx context.Context, t *chromedp.Target, el runtime.RemoteObjectID, ps []*prepared) error {
	paths, err := absPaths(ps)
	if err != nil {
		return err
	}
	_, err = cdp.Call(ctx, t, dom.SetFileInputFiles, dom.SetFileInputFilesParams{Files: paths, ObjectID: el})
	if err != nil {
		return fmt.Errorf("DOM.setFileInputFiles: %w", err)
	}
	return nil
}

// finishNative checks the page's reaction to natively set files and hashes
// them for the result (Chrome read them itself).
func finishNative(ctx context.Context, l *lib, el runtime.RemoteObjectID, ps []*prepared, cfg *config) (*Result, error) {
	cfg.set()
	var seen []pageFile
	if err := l.Call(ctx, "verify", &seen, obj(el), val(cfg.settle.Milliseconds())); err != nil {
		return nil, fmt.Errorf("upload: %w", err)
	}
	if len(seen) != len(ps) {
		// The page took the files and cleared the input, as many do so
		// that the same file can be chosen again: describe them from here.
		seen = make([]pageFile, len(ps))
		for i, p := range ps {
			name := filepath.Base(p.f.path)
			if p.path != nil {
				name = filepath.Base(p.path.real) // the path the browser was given
			}
			seen[i] = pageFile{Name: name, Type: p.mime, Size: p.size, LastModified: p.mod.UnixMilli()}
		}
	}
	sums, err := hashAll(ps, cfg)
	if err == nil {
		err = readUnchanged(ps)
	}
	if err != nil {
		return nil, err
	}
	return &Result{Mode: Native, Files: results(seen, sums)}, nil
}

// hashAll hashes the files the browser read by path, reporting progress.
func hashAll(ps []*prepared, cfg *config) ([]string, error) {
	sums := make([]string, len(ps))
	var done, total int64
	for _, p := range ps {
		total += p.size
	}
	for i, p := range ps {
		h := sha256.New()
		n, err := io.Copy(h, p.br)
		if err != nil {
			return nil, fmt.Errorf("upload: hashing %s: %w", p.f.Name, err)
		}
		sums[i] = hex.EncodeToString(h.Sum(nil))
		done += n
		if cfg.progress != nil {
			cfg.progress(Progress{File: i, Name: p.f.Name, Done: done, Total: total})
		}
	}
	return sums, nil
}

// send streams every file into the page and builds its File there; it
// returns the library's file ids and the SHA-256 of each file.
func send(ctx context.Context, l *lib, ps []*prepared, cfg *config) ([]int64, []string, error) {
	total := int64(0)
	for _, p := range ps {
		if p.size < 0 {
			total = -1
			break
		}
		total += p.size
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := make(chan struct{}, pageDepth)
	var wg sync.WaitGroup
	fail := func(err error) { cancel(err) }
	ids := make([]int64, len(ps))
	sums := make([]string, len(ps))
	var done int64
	for i, p := range ps {
		if err := l.Call(ctx, "create", &ids[i]); err != nil {
			return nil, nil, err
		}
		h := sha256.New()
		var n int64
		for index := 0; ; index++ {
			buf := make([]byte, cfg.chunk)
			k, rerr := io.ReadFull(p.br, buf)
			if k > 0 {
				h.Write(buf[:k])
				n += int64(k)
				// A base64 string needs no JSON escaping: build the
				// argument's JSON directly.
				arg := make([]byte, base64.StdEncoding.EncodedLen(k)+2)
				arg[0], arg[len(arg)-1] = '"', '"'
				base64.StdEncoding.Encode(arg[1:], buf[:k])
				select {
				case sem <- struct{}{}:
				case <-ctx.Done():
					wg.Wait()
					return nil, nil, cause(ctx)
				}
				id, idx := ids[i], index
				wg.Go(func() {
					defer func() { <-sem }()
					if err := l.Call(ctx, "put", nil, val(id), val(idx), &runtime.CallArgument{Value: arg}); err != nil {
						fail(fmt.Errorf("upload: sending %s: %w", p.f.Name, err))
					}
				})
				done += int64(k)
				if cfg.progress != nil {
					cfg.progress(Progress{File: i, Name: p.f.Name, Done: done, Total: total})
				}
			}
			if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
				break
			}
			if rerr != nil {
				wg.Wait()
				return nil, nil, fmt.Errorf("upload: reading %s: %w", p.f.Name, rerr)
			}
		}
		wg.Wait()
		if ctx.Err() != nil {
			return nil, nil, cause(ctx)
		}
		if p.size >= 0 && n != p.size {
			return nil, nil, fmt.Errorf("upload: %s gave %d bytes, not the %d announced", p.f.Name, n, p.size)
		}
		if err := l.Call(ctx, "finish", nil, val(ids[i]), val(p.f.Name), val(p.mime), val(p.mod.UnixMilli()), val(n)); err != nil {
			return nil, nil, fmt.Errorf("upload: %s: %w", p.f.Name, err)
		}
		sums[i] = hex.EncodeToString(h.Sum(nil))
	}
	return ids, sums, nil
}

// cause is the reason ctx ended: a failed slice, or the caller's
// cancellation.
func cause(ctx context.Context) error {
	if c := context.Cause(ctx); c != nil {
		return c
	}
	return ctx.Err()
}
