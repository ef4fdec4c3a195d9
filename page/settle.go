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

// SettleNote tells a model what an action's "settled in" means. The
// results do not repeat it: a program that gives them to a model says it
// once, in its instructions (agent.Instructions does).
const SettleNote = `An action waits (at most a second by default) until the page settled: a navigation it started loaded, no request in flight, the DOM quiet. "settled in 80ms" says all of these held; "not settled after 1s: ..." says what did not. Then it lists what changed (+ added, - removed, ~ value, ! live region or alert, # heading) or says "nothing changed".`

// watch starts recording what the action changes in the main document.
func (a *action) watch() {
	if a.t.p.cfg.settleMax <= 0 || a.dialogOpen() {
		return
	}
	a.watching = a.call(a.t.libs.main, "watch", nil) == nil
}

type quietState struct {
	Since   int  `json:"since"`   // ms the document has been unchanged
	Imgs    int  `json:"imgs"`    // images added that are loading
	Frames  int  `json:"frames"`  // frames drawn since the last change (at most 3 counted)
	Changed bool `json:"changed"` // the document changed since the watch began
	Fixed   bool `json:"fixed"`   // the parsed document has nothing that runs: it cannot change by itself
	// NetFrames is how many frames were drawn since the last response
	// ended (at most 4).
	NetFrames int `json:"netFrames"`

	URL   string `json:"url"` // where the document is, at the look
	Title string `json:"title"`
}

// settleFrames is how many frames a page that reacted must draw with no
// change before it counts as quiet: what it scheduled for its next frame,
// and the idle-time work after it (a canvas's encode), ran by then.
const settleFrames = 2

// quietDown waits, within the settle bound, until the page is quiet, and
// notes what it waited for; then, when the page did not navigate, what
// changed. Quiet is no request in flight, no added image loading, and
// either the document unchanged for the quiet time, or — once the page
// has reacted to the action (it navigated, changed the document or sent a
// request) — unchanged for two frames drawn and a fifth of the quiet time
// (20 ms by default; two frames at 60 Hz take 17 to 33 ms): its reaction
// ran its course. A response counts as a change: the page goes on from
// it. A page that shows no reaction yet may have one on a timer, so it
// gets the whole quiet time; so does a page that draws no frames (a
// background tab). A document with nothing in it that runs (no script,
// handler, frame or refresh: a static article) needs only the short
// quiet, frames or not.
func (a *action) quietDown() string {
	cfg := &a.t.p.cfg
	if cfg.settleMax <= 0 || a.ctx.Err() != nil || a.dialogOpen() {
		return ""
	}
	t := a.t
	start := time.Now()
	deadline := start.Add(cfg.settleMax)
	a.lastQuiet = nil
	domQuiet, netCalm := false, false
	inflight := func() int {
		t.mu.Lock()
		defer t.mu.Unlock()
		return len(t.inflight)
	}
	netQuiet := func() time.Duration {
		t.mu.Lock()
		defer t.mu.Unlock()
		return time.Since(t.netActive)
	}
	// A busy page answers late and runs late what it scheduled: the quiet
	// needed grows with the slowest answer.
	var slowest time.Duration
	for first := true; ; first = false {
		t0 := time.Now()
		// The first poll counts the action's input as the last change:
		// it ended now, or when a Do said so (InputDone). A navigation's
		// new document was watched from its start (preloadLib): its own
		// changes and frames since then count.
		ago := -1
		if first && !a.watchedDoc() {
			ago = 0
			if at := a.inputAt.Load(); at != 0 {
				ago = int(max(t0.Sub(time.Unix(0, at)).Milliseconds(), 0))
			}
		}
		var q quietState
		t.mu.Lock()
		seq := t.navSeq
		t.mu.Unlock()
		netAgo := netQuiet()
		if err := a.call(t.libs.main, "quietState", &q, ago, netAgo.Milliseconds()); err != nil {
			a.lastQuiet = nil
			if a.ctx.Err() != nil || a.dialogOpen() {
				return ""
			}
			domQuiet = false
			break
		}
		a.lastQuiet, a.lastQuietSeq = &q, seq
		slowest = max(slowest, time.Since(t0))
		late := 2 * max(slowest-10*time.Millisecond, 0)
		need := cfg.settleQuiet + late
		since := time.Duration(q.Since) * time.Millisecond
		short := cfg.settleQuiet / 5
		reacting := q.Changed || a.reacted()
		// A document with nothing that runs has nothing scheduled for a
		// frame: its quiet since the parse is enough.
		if q.Fixed || q.Frames >= settleFrames && reacting {
			need = min(need, short+late)
		}
		domQuiet = since >= need && q.Imgs == 0
		// A response the page got starts its next step: the quiet counts
		// from there too, and so do the frames of a page that reacted
		// (what the response's handler put off to its next frame ran by
		// the second), unless the whole quiet passed or nothing in the
		// page runs.
		nq := netQuiet()
		netCalm = nq >= short && (!reacting || q.Fixed || q.NetFrames >= settleFrames || nq >= cfg.settleQuiet+late)
		if domQuiet && netCalm && inflight() == 0 {
			break
		}
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		// Frames come every 16 ms or so: a page that reacted is looked at
		// again within half a frame, to see its second one soon after it
		// came, also while its quiet is long enough and only frames are
		// missing; one that did not, at a gentler pace.
		wait := 15 * time.Millisecond
		target := need
		if reacting {
			wait = 8 * time.Millisecond
			target = min(need, short+late)
		}
		if since < target {
			wait = min(max(target-since, wait), 15*time.Millisecond)
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
	n := inflight()
	var msg string
	if domQuiet && netCalm && n == 0 {
		// What settled means is said once, in SettleNote: every result
		// would say the same three things.
		msg = fmt.Sprintf("settled in %v", took)
	} else {
		var busy []string
		if !domQuiet {
			busy = append(busy, "the DOM still changing")
		}
		if n > 0 {
			busy = append(busy, fmt.Sprintf("%d requests in flight", n))
		} else if !netCalm {
			busy = append(busy, "requests still coming")
		}
		msg = fmt.Sprintf("not settled after %v: %s", took, strings.Join(busy, ", "))
	}
	if a.watching && !a.navigated() {
		var lines []string
		if err := a.call(t.libs.main, "changes", &lines, maxChanges); err == nil {
			if len(lines) == 0 {
				msg += "; nothing changed"
			} else {
				msg += "; changes:\n" + wrapUntrusted(strings.Join(lines, "\n"))
			}
		}
	}
	return msg
}

// settledWhere settles the page now, when the action settles, and says
// where the tab is from the settling's last look at it: no other round
// trip, and the title a page sets once loaded shows. Without settling it
// asks the page.
func (a *action) settledWhere() string {
	if a.settles && a.settled == nil {
		msg := a.quietDown()
		a.settled = &msg
		if q := a.lastQuiet; q != nil && !a.leftLastQuiet() {
			return "now at " + wrapUntrusted(fmt.Sprintf("url: %s\ntitle: %q", q.URL, q.Title))
		}
	}
	return a.where()
}

// leftLastQuiet says whether the tab left the document of the last look.
func (a *action) leftLastQuiet() bool {
	a.t.mu.Lock()
	defer a.t.mu.Unlock()
	return a.lastQuietSeq != a.t.navSeq
}

// watchedDoc says whether the tab's document is the one a navigation of
// the action watched from its start.
func (a *action) watchedDoc() bool {
	a.t.mu.Lock()
	defer a.t.mu.Unlock()
	return a.docWatched != 0 && a.docWatched == a.t.navSeq
}

// reacted says whether the page did something since the action began that
// the document's changes do not show: navigated, or sent a request.
func (a *action) reacted() bool {
	a.t.mu.Lock()
	defer a.t.mu.Unlock()
	return a.t.navSeq != a.navSeq || a.t.reqSeq != a.reqSeq
}

// dialogOpen says whether a dialog blocks the page: no script runs then.
func (a *action) dialogOpen() bool {
	a.t.mu.Lock()
	defer a.t.mu.Unlock()
	return a.t.dialog != nil
}
