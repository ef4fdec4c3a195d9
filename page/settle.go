package page

import (
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

type quietState struct {
	Since int `json:"since"` // ms the document has been unchanged
	Imgs  int `json:"imgs"`  // images added that are loading
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
	// A busy page answers late and runs late what it scheduled: the quiet
	// needed grows with the slowest answer.
	var slowest time.Duration
	for first := true; ; first = false {
		t0 := time.Now()
		// The first poll counts the action's input as the last change:
		// it ended now, or when a Do said so (InputDone).
		ago := -1
		if first {
			ago = 0
			if at := a.inputAt.Load(); at != 0 {
				ago = int(max(t0.Sub(time.Unix(0, at)).Milliseconds(), 0))
			}
		}
		var q quietState
		if err := a.call(t.libs.main, "quietState", &q, ago); err != nil {
			if a.ctx.Err() != nil || a.dialogOpen() {
				return ""
			}
			domQuiet = false
			break
		}
		slowest = max(slowest, time.Since(t0))
		need := cfg.settleQuiet + 2*max(slowest-10*time.Millisecond, 0)
		since := time.Duration(q.Since) * time.Millisecond
		domQuiet = since >= need && q.Imgs == 0
		if domQuiet && inflight() == 0 {
			break
		}
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		wait := 25 * time.Millisecond
		if since < need {
			wait = min(max(need-since, 10*time.Millisecond), 50*time.Millisecond)
		}
		timer := time.NewTimer(min(wait, left))
		select {
		case <-timer.C:
		case <-a.ctx.Done():
			timer.Stop()
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
