package page

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// A page can open a tab: a link with target=_blank, window.open, a form
// with a target. The tab requests its URL before the Page can hold it, so
// the browser side must keep it within the rules (livetab's extension
// blocks such a tab's requests outside the client's domains). What the Page
// does is tell the caller: each action's result says which tab a page
// opened, or which one the guard refused, and a refused one is closed.

// popupWait bounds the wait for the tab a page opened to show up.
const popupWait = 3 * time.Second

// popupPoll is how often the Page looks whether new tabs have settled.
const popupPoll = 50 * time.Millisecond

// opened is a Page.windowOpen of a tab: a page asked for a new tab.
type opened struct {
	seq uint64
	url string
}

// popupMark is where the tab's record of opened tabs stood when an action
// began.
type popupMark struct {
	seq   uint64
	known map[target.ID]bool
}

func (t *tab) markPopups() popupMark {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := popupMark{seq: t.openSeq, known: map[target.ID]bool{}}
	for _, pp := range t.popups {
		m.known[pp.id] = true
	}
	return m
}

// popupNotes says what became of the tabs the tab's pages opened: "opened
// a new tab 3 … at:", or "blocked a popup: why; its URL:" (and closes it),
// the URL in a page block. It
// waits a moment for the tabs that pages asked for since m, and looks at
// every tab the tab opened that no result has named yet: one that showed up
// late is reported with the next action.
func (p *Page) popupNotes(ctx context.Context, t *tab, m popupMark) []string {
	t.mu.Lock()
	var asked []opened
	for _, o := range t.opens {
		if o.seq > m.seq {
			asked = append(asked, o)
		}
	}
	pending := 0
	for _, pp := range t.popups {
		if !t.named[pp.id] {
			pending++
		}
	}
	t.mu.Unlock()
	if len(asked) == 0 && pending == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, popupWait)
	defer cancel()
	pops := p.settledPopups(ctx, t, m, len(asked))
	var notes []string
	seen := map[string]bool{}
	for _, pp := range pops {
		url := pp.url
		if url == "" {
			url = "about:blank"
		}
		seen[url] = true
		if err := p.popupRefused(ctx, t, url); err != nil {
			p.closePopup(t, pp.id)
			if !t.blockedURL(url) {
				notes = append(notes, fmt.Sprintf("blocked a popup: %v; its URL:\n%s", err, wrapUntrusted(url)))
			}
			continue
		}
		t.mu.Lock()
		t.named[pp.id] = true
		t.mu.Unlock()
		p.adoptPopups()
		id := string(pp.id)
		p.tabsMu.Lock()
		for _, x := range p.tabs {
			if x.targetID == pp.id {
				id = x.id
			}
		}
		p.tabsMu.Unlock()
		// A URL is the page's words (a path needs no spaces): in a
		// page block, as after a navigation.
		notes = append(notes, fmt.Sprintf("opened a new tab %s (switch to it with its id) at:\n%s", id, wrapUntrusted(url)))
	}
	for _, o := range asked {
		if seen[o.url] {
			continue
		}
		if err := p.popupRefused(ctx, t, o.url); err != nil {
			// Its tab may show up later: it is closed then, unreported.
			t.mu.Lock()
			t.lateBlocked = append(t.lateBlocked, o.url)
			t.mu.Unlock()
			notes = append(notes, fmt.Sprintf("blocked a popup: %v; its URL:\n%s", err, wrapUntrusted(o.url)))
			continue
		}
		if len(pops) < len(asked) {
			notes = append(notes, fmt.Sprintf("the page asked for a new tab, but none has opened yet; its URL:\n%s", wrapUntrusted(o.url)))
		}
	}
	return notes
}

// popupRefused asks the guard about a tab a page opened.
func (p *Page) popupRefused(ctx context.Context, t *tab, url string) error {
	g := p.cfg.guard
	if g == nil || url == "about:blank" {
		return nil
	}
	return g.CheckRequest(ctx, Request{Tab: t.id, URL: url, MainFrame: true, During: true})
}

// blockedURL reports whether a result already said that the popup to url
// was blocked, and forgets it.
func (t *tab) blockedURL(url string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, u := range t.lateBlocked {
		if u == url {
			t.lateBlocked = append(t.lateBlocked[:i], t.lateBlocked[i+1:]...)
			return true
		}
	}
	return false
}

// settledPopups waits until at least want tabs opened after m have shown
// up and every popup of the tab no result has named yet has settled, or
// ctx ends, and returns those popups. A popup has settled when the guard
// refuses its URL, or when it shows a title of its own: while a tab loads
// (and follows redirects) Chrome titles it with its URL.
func (p *Page) settledPopups(ctx context.Context, t *tab, m popupMark, want int) []popupInfo {
	for {
		t.mu.Lock()
		var pops []popupInfo
		for _, pp := range t.popups {
			if !t.named[pp.id] {
				pops = append(pops, pp)
			}
		}
		t.mu.Unlock()
		fresh, settled := 0, true
		for _, pp := range pops {
			if m.known[pp.id] || pp.url == "" || pp.url == "about:blank" {
				settled = settled && pp.url != ""
				continue
			}
			fresh++
			loading := pp.title == "" || strings.Contains(pp.url, pp.title)
			if loading && p.popupRefused(ctx, t, pp.url) == nil {
				settled = false
			}
		}
		if fresh >= want && settled {
			return pops
		}
		select {
		case <-time.After(popupPoll):
		case <-ctx.Done():
			return pops
		}
	}
}

// closePopup closes a tab a page opened that the guard refused: it shows a
// blocked request, or a page the agent may not see. A window of the
// person's tab (AttachTab) is the person's: the Page only forgets it.
func (p *Page) closePopup(t *tab, id target.ID) {
	p.tabsMu.Lock()
	p.tabs = slices.DeleteFunc(p.tabs, func(x *tab) bool { return x.targetID == id && x.ctx == nil })
	p.tabsMu.Unlock()
	t.mu.Lock()
	t.popups = slices.DeleteFunc(t.popups, func(pp popupInfo) bool { return pp.id == id })
	t.refused[id] = true
	adopted := t.adopted
	t.mu.Unlock()
	if adopted {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(t.ctx, 5*time.Second)
		defer cancel()
		_, _ = chromedp.CallBrowser(ctx, target.CloseTarget, target.CloseTargetParams{TargetID: id})
	}()
}
