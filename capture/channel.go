package capture

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/cdp"

	"github.com/livetab/livetab/livetabcdp"
)

// RungChannel: through livetab, the extension's transfer page, framed into
// the tab, posts the blob to the relay over loopback, and Go reads it from
// the relay (Livetab.readTransfer), which between two Go programs costs
// far less than Chrome's own base64 of IO.read, and than the download
// Chrome makes for chrome.downloads
// (docs/decisions/2026-11-25-a-transfer-channel-past-cdp.md).

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
	res, err := c.store(pctx, cfg, m, newAheadSource(pctx, read, m.size, channelChunk))
	if err != nil && ctx.Err() == nil {
		if cause := context.Cause(pctx); cause != nil && !errors.Is(cause, context.Canceled) {
			return nil, cause
		}
	}
	return res, err
}
