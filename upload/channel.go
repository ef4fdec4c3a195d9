package upload

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/livetabcdp"
)

// The channel rung: through livetab, the bytes go to the relay over the
// program's CDP connection (Livetab.writeTransfer, cheap between two Go
// programs), and the extension's transfer page, framed into the tab,
// fetches them from the relay over loopback and hands the page a Blob. No
// byte becomes a string in Chrome, which holds the in-page slices to about
// 20 MiB/s (docs/decisions/2026-11-25-a-transfer-channel-past-cdp.md).

// FrameReady bounds the wait for the transfer frame to load; a page that
// keeps it from loading (it removes frames it did not add, say) gets the
// in-page slices instead.
var FrameReady = 5 * time.Second

// channelDepth is how many writes are in flight to the relay at once.
const channelDepth = 4

// channelFiles are the transfers and frames of one upload's files.
type channelFiles struct {
	t        *chromedp.Target
	l        *lib
	transfer []string
	frame    []int64
}

// close ends every transfer and frame, also after the caller's ctx ended.
func (cf *channelFiles) close(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	for _, id := range cf.frame {
		cf.l.Call(ctx, "frameClose", nil, val(id))
	}
	for _, id := range cf.transfer {
		cdp.Call(ctx, cf.t, livetabcdp.CloseTransfer, livetabcdp.CloseTransferParams{Transfer: id})
	}
}

// errNoChannel marks why the channel could not start, before any byte was
// read: the upload falls back to the in-page slices.
var errNoChannel = errors.New("upload: no transfer channel")

// openChannel opens a transfer and a ready frame for every file. It fails
// with errNoChannel when the channel cannot serve these files here.
func openChannel(ctx context.Context, t *chromedp.Target, l *lib, ps []*prepared) (*channelFiles, error) {
	cf := &channelFiles{t: t, l: l}
	for _, p := range ps {
		if p.size < 0 {
			return cf, fmt.Errorf("%w: %s has no known size", errNoChannel, p.f.Name)
		}
		res, err := cdp.Call(ctx, t, livetabcdp.OpenTransfer, livetabcdp.OpenTransferParams{Direction: livetabcdp.TransferToPage, Size: p.size})
		if err != nil {
			if livetabcdp.IsUnsupported(err) {
				return cf, fmt.Errorf("%w: the browser has no livetab extension (plain Chrome)", errNoChannel)
			}
			return cf, fmt.Errorf("%w: Livetab.openTransfer: %w", errNoChannel, err)
		}
		cf.transfer = append(cf.transfer, res.Transfer)
		var frame int64
		if err := l.Call(ctx, "frameOpen", &frame, val(res.FrameURL), val(FrameReady.Milliseconds())); err != nil {
			return cf, fmt.Errorf("%w: %w", errNoChannel, err)
		}
		cf.frame = append(cf.frame, frame)
	}
	return cf, nil
}

// sendChannel streams every file to the relay while its frame fetches it,
// and returns the library's file ids and the SHA-256 of each file.
func sendChannel(ctx context.Context, cf *channelFiles, ps []*prepared, cfg *config) ([]int64, []string, error) {
	var total int64
	for _, p := range ps {
		total += p.size
	}
	ids := make([]int64, len(ps))
	sums := make([]string, len(ps))
	var done int64
	for i, p := range ps {
		got := make(chan error, 1)
		go func() {
			got <- cf.l.Call(ctx, "frameGet", &ids[i], val(cf.frame[i]), val(p.f.Name), val(p.mime), val(p.mod.UnixMilli()), val(p.size))
		}()
		h := sha256.New()
		var off int64
		wctx, cancel := context.WithCancelCause(ctx)
		sem := make(chan struct{}, channelDepth)
		var wg sync.WaitGroup
		var rerr error
		for rerr == nil {
			buf := make([]byte, cfg.chunk)
			var k int
			k, rerr = io.ReadFull(p.br, buf)
			if k == 0 {
				break
			}
			if off+int64(k) > p.size {
				rerr = fmt.Errorf("upload: %s gives more than the %d bytes announced", p.f.Name, p.size)
				break
			}
			h.Write(buf[:k])
			select {
			case sem <- struct{}{}:
			case <-wctx.Done():
			}
			if wctx.Err() != nil {
				break
			}
			params := livetabcdp.WriteTransferParams{Transfer: cf.transfer[i], Offset: off, Data: buf[:k]}
			wg.Go(func() {
				defer func() { <-sem }()
				if _, err := cdp.Call(wctx, cf.t, livetabcdp.WriteTransfer, params); err != nil {
					cancel(fmt.Errorf("upload: sending %s: %w", p.f.Name, err))
				}
			})
			off += int64(k)
			done += int64(k)
			if cfg.progress != nil {
				cfg.progress(Progress{File: i, Name: p.f.Name, Done: done, Total: total})
			}
		}
		wg.Wait()
		failed := wctx.Err() != nil
		cancel(nil)
		if failed {
			return nil, nil, cause(wctx)
		}
		if rerr != io.EOF && rerr != io.ErrUnexpectedEOF {
			return nil, nil, fmt.Errorf("upload: reading %s: %w", p.f.Name, rerr)
		}
		if off != p.size {
			return nil, nil, fmt.Errorf("upload: %s gave %d bytes, not the %d announced", p.f.Name, off, p.size)
		}
		select {
		case err := <-got:
			if err != nil {
				return nil, nil, fmt.Errorf("upload: %s: %w", p.f.Name, err)
			}
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		cf.frame[i] = 0 // frameGet removed it
		sums[i] = hex.EncodeToString(h.Sum(nil))
	}
	return ids, sums, nil
}

// deliver puts the files' bytes into the page: through the transfer
// channel when the mode allows and it opens, else in slices. It returns
// the path taken and, when the channel was skipped, why.
func deliver(ctx context.Context, t *chromedp.Target, l *lib, ps []*prepared, cfg *config) ([]int64, []string, Mode, string, error) {
	if cfg.mode == InPage {
		ids, sums, err := send(ctx, l, ps, cfg)
		return ids, sums, InPage, "", err
	}
	cf, err := openChannel(ctx, t, l, ps)
	defer cf.close(ctx)
	if err == nil {
		ids, sums, err := sendChannel(ctx, cf, ps, cfg)
		return ids, sums, Channel, "", err
	}
	if cfg.mode == Channel || ctx.Err() != nil || !errors.Is(err, errNoChannel) || errors.Is(tabErr(err), ErrTabClosed) {
		return nil, nil, Channel, "", tabErr(err)
	}
	ids, sums, serr := send(ctx, l, ps, cfg)
	return ids, sums, InPage, err.Error(), serr
}
