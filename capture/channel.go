package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/cdp"

	"github.com/livetab/livetab/livetabcdp"
)

// RungChannel: through livetab, the extension's transfer page, framed into
// the tab, posts the blob to the relay over loopback, and Go reads the
// relay's file of it as it arrives (Livetab.transferFile) when on the
// browser's machine, else from the relay (Livetab.readTransfer), which
// between two Go programs costs far less than Chrome's own base64 of
// IO.read. Chrome's post of the blob is slower than its download of it, so
// the channel comes after RungSave
// (docs/decisions/2026-11-25-a-transfer-channel-past-cdp.md,
// docs/decisions/2026-11-27-capture-reads-the-transfer-file-by-path.md).

// FrameReady bounds the wait for the transfer frame to load; a page that
// keeps it from loading gets the next rung.
var FrameReady = 5 * time.Second

// channelChunk is the bytes per Livetab.readTransfer.
const channelChunk = 2 << 20

var errNoChannel = errors.New("capture: the browser has no livetab transfer channel (plain Chrome): allow another rung")

// hasChannel says whether this browser may have the channel: a livetab
// extension (plain Chrome has no transfer page).
func (c *Capturer) hasChannel(ctx context.Context) bool {
	how, err := c.saveHow(ctx)
	return err == nil && how != saveByPage
}

// channel captures the blob the library registered as id through the
// transfer channel.
func (c *Capturer) channel(ctx context.Context, cfg *config, l *lib, id int64, m meta) (*Result, error) {
	tr, err := cdp.Call(ctx, c.t, livetabcdp.OpenTransfer, livetabcdp.OpenTransferParams{Direction: livetabcdp.TransferFromPage, Size: m.size})
	if err != nil {
		if livetabcdp.IsUnsupported(err) {
			return nil, errNoChannel
		}
		return nil, fmt.Errorf("capture: Livetab.openTransfer: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		cdp.Call(cctx, c.t, livetabcdp.CloseTransfer, livetabcdp.CloseTransferParams{Transfer: tr.Transfer})
		cancel()
	}()
	// The page posts while Go reads: the relay answers each read once its
	// bytes arrived. A post that fails ends the reads, and no asset is
	// made before the first bytes arrive.
	pctx, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	go func() {
		if err := l.Call(pctx, "post", nil, val(id), val(tr.FrameURL), val(FrameReady.Milliseconds())); err != nil {
			fail(fmt.Errorf("capture: the transfer channel: %w", err))
		}
	}()
	m.rung = RungChannel
	read := func(rctx context.Context, off, n int64) ([]byte, error) {
		r, err := cdp.Call(rctx, c.t, livetabcdp.ReadTransfer, livetabcdp.ReadTransferParams{Transfer: tr.Transfer, Offset: off, Size: n})
		if err != nil {
			if cause := context.Cause(pctx); cause != nil && ctx.Err() == nil {
				return nil, cause
			}
			return nil, fmt.Errorf("capture: reading the transfer: %w", c.cdpErr(err))
		}
		return r.Data, nil
	}
	var src chunkSource
	if fs, err := c.transferFile(pctx, tr.Transfer, m.size, cfg.chunk); err != nil {
		if cause := context.Cause(pctx); cause != nil && ctx.Err() == nil && !errors.Is(cause, context.Canceled) {
			return nil, cause
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !errors.Is(err, errNoTransferFile) {
			return nil, err
		}
		src = newAheadSource(pctx, read, m.size, channelChunk)
	} else {
		src = fs
	}
	res, err := c.store(pctx, cfg, m, src)
	if err != nil && ctx.Err() == nil {
		if cause := context.Cause(pctx); cause != nil && !errors.Is(cause, context.Canceled) {
			return nil, cause
		}
	}
	return res, err
}

// errNoTransferFile: the relay's file of the transfer is not one this
// program may read itself (another machine, another user, a relay from
// before Livetab.transferFile): read it through the relay.
var errNoTransferFile = errors.New("capture: the transfer's file cannot be read here")

// transferFile opens the relay's file of the transfer from the page, once
// its first bytes arrived (Livetab.transferFile), after checking that it
// is the file the relay made for this transfer: an absolute path named
// after the transfer's token, a regular file (no link) in a directory,
// both of this user and closed to others. Anything else is
// errNoTransferFile.
func (c *Capturer) transferFile(ctx context.Context, transfer string, size int64, chunk int) (*fileSource, error) {
	r, err := cdp.Call(ctx, c.t, livetabcdp.TransferFile, livetabcdp.TransferFileParams{Transfer: transfer})
	if err != nil {
		if livetabcdp.IsUnsupported(err) {
			return nil, errNoTransferFile
		}
		return nil, fmt.Errorf("capture: the transfer: %w", c.cdpErr(err))
	}
	if r.Total != size {
		return nil, fmt.Errorf("capture: the transfer holds %d bytes, not the blob's %d", r.Total, size)
	}
	path := r.Path
	if transferFilePath != nil {
		path = transferFilePath(path)
	}
	f, err := openTransferFile(path, transfer)
	if err != nil {
		return nil, err
	}
	transferFiles.Add(1)
	return &fileSource{c: c, f: f, transfer: transfer, size: size, have: r.Written, chunk: chunk}, nil
}

var (
	// transferFilePath, when set, rewrites the path the relay gives, for
	// tests.
	transferFilePath func(string) string
	// transferFiles counts the transfers read from their file, for tests.
	transferFiles atomic.Int64
)

// openTransferFile opens path if it is the file livetab's relay made for
// transfer, else fails with errNoTransferFile.
func openTransferFile(path, transfer string) (*os.File, error) {
	if !filepath.IsAbs(path) || filepath.Base(path) != livetabcdp.TransferFileName(transfer) {
		return nil, fmt.Errorf("%w: %q is not the transfer's file", errNoTransferFile, path)
	}
	if di, err := os.Lstat(filepath.Dir(path)); err != nil || !di.IsDir() || !private(di) {
		return nil, fmt.Errorf("%w: its directory is not this user's alone", errNoTransferFile)
	}
	li, err := os.Lstat(path)
	if err != nil || !li.Mode().IsRegular() || !private(li) {
		return nil, fmt.Errorf("%w: it is not a file of this user's alone", errNoTransferFile)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNoTransferFile, err)
	}
	// The name could have been replaced between the check and the open.
	if fi, err := f.Stat(); err != nil || !os.SameFile(li, fi) {
		f.Close()
		return nil, fmt.Errorf("%w: it changed as it was opened", errNoTransferFile)
	}
	return f, nil
}

// fileSource reads the relay's file of a transfer from the page as the
// page posts it: it reads what has arrived, and asks the relay
// (Livetab.transferFile) how much more has once it caught up.
type fileSource struct {
	c        *Capturer
	f        *os.File
	transfer string
	size     int64
	off      int64 // the next byte to read
	have     int64 // the bytes the relay said arrived
	chunk    int
	buf      []byte
}

func (s *fileSource) next(ctx context.Context) ([]byte, error) {
	if s.off >= s.size {
		return nil, io.EOF
	}
	for s.off >= s.have {
		r, err := cdp.Call(ctx, s.c.t, livetabcdp.TransferFile, livetabcdp.TransferFileParams{Transfer: s.transfer, Offset: s.off})
		if err != nil {
			return nil, fmt.Errorf("capture: the transfer: %w", s.c.cdpErr(err))
		}
		if r.Written <= s.have || r.Written > s.size {
			return nil, fmt.Errorf("capture: the transfer reported %d bytes after %d", r.Written, s.have)
		}
		s.have = r.Written
	}
	if s.buf == nil {
		s.buf = make([]byte, s.chunk)
	}
	n, err := s.f.ReadAt(s.buf[:min(int64(len(s.buf)), s.have-s.off)], s.off)
	if n == 0 {
		return nil, fmt.Errorf("capture: reading the transfer's file at %d: %w", s.off, err)
	}
	s.off += int64(n)
	return s.buf[:n], nil
}

func (s *fileSource) close() { s.f.Close() }
