package agent

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A client that gives a tool call a progress token hears how a long
// transfer (a capture, an upload) advances through MCP's
// notifications/progress, a few times a second at most: media of hundreds
// of megabytes take long enough for a client to want to show it.

type progressKey struct{}

// progressGap is the least time between two notifications of one call.
const progressGap = 250 * time.Millisecond

// reporter sends one call's progress notifications. Reports come from a
// transfer's loop, which must not wait on the client: the newest report
// waits in a slot of one for a goroutine to send it, and older ones that
// were never sent are dropped.
type reporter struct {
	ss   *mcp.ServerSession
	tok  any
	slot chan *mcp.ProgressNotificationParams

	mu   sync.Mutex
	last time.Time
	seen float64
}

// withProgress gives ctx a reporter when the call asked for progress; the
// reporter stops with ctx.
func withProgress(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	if req == nil || req.Session == nil || req.Params == nil || req.Params.GetProgressToken() == nil {
		return ctx
	}
	r := &reporter{ss: req.Session, tok: req.Params.GetProgressToken(), slot: make(chan *mcp.ProgressNotificationParams, 1)}
	go r.send(ctx)
	return context.WithValue(ctx, progressKey{}, r)
}

func (r *reporter) send(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case p := <-r.slot:
			sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			r.ss.NotifyProgress(sctx, p)
			cancel()
		}
	}
}

// progressFunc is the reporter of ctx's call as a transfer's callback
// (done and total in bytes, total -1 when unknown), or nil when the call
// asked for no progress.
func progressFunc(ctx context.Context, what string) func(done, total int64) {
	r, _ := ctx.Value(progressKey{}).(*reporter)
	if r == nil {
		return nil
	}
	return func(done, total int64) {
		now := time.Now()
		r.mu.Lock()
		end := total > 0 && done >= total
		// Progress must increase; a rung that starts over (a download's
		// file read after the download) reports no step back.
		if float64(done) <= r.seen || !end && now.Sub(r.last) < progressGap {
			r.mu.Unlock()
			return
		}
		r.last, r.seen = now, float64(done)
		r.mu.Unlock()
		p := &mcp.ProgressNotificationParams{ProgressToken: r.tok, Progress: float64(done), Message: what}
		if total > 0 {
			p.Total = float64(total)
		}
		select {
		case r.slot <- p:
		default:
			// The older report still waits: take its place.
			select {
			case <-r.slot:
			default:
			}
			select {
			case r.slot <- p:
			default:
			}
		}
	}
}
