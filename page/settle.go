package page

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Defaults of settling after an action.
const (
	DefaultSettle      = time.Second
	DefaultSettleQuiet = 100 * time.Millisecond
	// maxChanges caps the lines of the changes an action reports.
	maxChanges = 15
)

// WithSettle sets how long an action waits at most, after its input, for
// the page to settle — a navigation loaded, no request in flight, and no
// change to the document for quiet — and how long quiet is. max 0 turns
// settling (and the report of changes) off. The defaults are
// DefaultSettle and DefaultSettleQuiet.
func WithSettle(max, quiet time.Duration) Option {
	return func(c *config) {
		c.settleMax = max
		if quiet > 0 {
			c.settleQuiet = quiet
		}
	}
}

// watch starts recording what the action changes in the main document.
func (a *action) watch() {
	if a.t.p.cfg.settleMax <= 0 || a.dialogOpen() {
		return
	}
	a.watching = a.call(a.t.libs.main, "watch", nil) == nil
}

type quietRes struct {
	Quiet  bool `json:"quiet"`
	Waited int  `json:"waited"`
}

// quietDown waits, within the settle bound, until the document has been
// quiet for the quiet time with no request in flight, and notes what it
// waited for; then, when the page did not navigate, what changed.
func (a *action) quietDown() string {
	cfg := &a.t.p.cfg
	if cfg.settleMax <= 0 || a.ctx.Err() != nil || a.dialogOpen() {
		return ""
	}
	t := a.t
	start := time.Now()
	deadline := start.Add(cfg.settleMax)
	domQuiet := false
	inflight := func() int {
		t.mu.Lock()
		defer t.mu.Unlock()
		return len(t.inflight)
	}
	for {
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		var q quietRes
		if err := a.call(t.libs.main, "quiet", &q, cfg.settleQuiet.Milliseconds(), left.Milliseconds()); err != nil {
			if a.ctx.Err() != nil {
				return ""
			}
			domQuiet = false
			break
		}
		domQuiet = q.Quiet
		if inflight() == 0 {
			if domQuiet {
				break
			}
			continue
		}
		wctx, cancel := context.WithDeadline(a.ctx, deadline)
		_ = t.waitState(wctx, func() bool { return len(t.inflight) == 0 || t.closed })
		cancel()
		if a.ctx.Err() != nil {
			return ""
		}
	}
	took := time.Since(start).Round(time.Millisecond)
	var what []string
	if a.navigated() {
		what = append(what, "load")
	}
	n := inflight()
	if n == 0 {
		what = append(what, "network idle")
	}
	var msg string
	if domQuiet && n == 0 {
		what = append(what, "DOM quiet")
		msg = fmt.Sprintf("settled in %v (%s)", took, strings.Join(what, ", "))
	} else {
		var busy []string
		if !domQuiet {
			busy = append(busy, "the DOM still changing")
		}
		if n > 0 {
			busy = append(busy, fmt.Sprintf("%d requests in flight", n))
		}
		msg = fmt.Sprintf("not settled after %v: %s", took, strings.Join(busy, ", "))
	}
	if a.watching && !a.navigated() {
		var lines []string
		if err := a.call(t.libs.main, "changes", &lines, maxChanges); err == nil {
			if len(lines) == 0 {
				msg += "; nothing on the page changed"
			} else {
				msg += "; changes:\n" + wrapUntrusted(strings.Join(lines, "\n"))
			}
		}
	}
	return msg
}

// dialogOpen says whether a dialog blocks the page: no script runs then.
func (a *action) dialogOpen() bool {
	a.t.mu.Lock()
	defer a.t.mu.Unlock()
	return a.t.dialog != nil
}
