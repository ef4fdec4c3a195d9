// Package hidden keeps a tab that Target.closeTarget spared out of the
// target lists of the connection that asked to close it, for a moment.
// livetab's closing rule leaves open a tab the connection did not create
// (docs/decisions/2026-11-22-cancel-closes-only-tabs-livetab-opened.md),
// but chromedp, after closeTarget, polls Target.getTargets until the
// target is gone and would otherwise wait out its whole bound. The relay
// (package extcdp) and the native backend (package livetab) both hide such
// a tab so.
package hidden

import (
	"time"

	"github.com/chromedp/cdproto/target"
)

// For is how long a spared tab stays out of the lists: chromedp v0.23 polls
// for up to 500 ms after closeTarget.
const For = time.Second

// Tabs maps a hidden target to the moment it shows again. Its owner's
// lock guards it.
type Tabs map[target.ID]time.Time

// Hide leaves id out of the lists from now for [For].
func (h Tabs) Hide(id target.ID, now time.Time) { h[id] = now.Add(For) }

// Show lists id again at once: the connection attached to it anew.
func (h Tabs) Show(id target.ID) { delete(h, id) }

// Hidden reports whether id is out of the lists at now, and forgets it
// once its moment has passed.
func (h Tabs) Hidden(id target.ID, now time.Time) bool {
	until, ok := h[id]
	if !ok {
		return false
	}
	if now.Before(until) {
		return true
	}
	delete(h, id)
	return false
}

// Any forgets the tabs whose moment has passed and reports whether any is
// still hidden.
func (h Tabs) Any(now time.Time) bool {
	for id, until := range h {
		if !now.Before(until) {
			delete(h, id)
		}
	}
	return len(h) > 0
}
