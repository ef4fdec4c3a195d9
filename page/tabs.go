package page

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// TabInfo describes a tab of the Page.
type TabInfo struct {
	ID       string `json:"id"` // short id for SwitchTab and CloseTab
	TargetID string `json:"targetId"`
	URL      string `json:"url"`
	Title    string `json:"title"`
	Current  bool   `json:"current"`
	Opened   bool   `json:"opened"`            // opened by the Page or by a page in it: CloseTab may close it
	Attached bool   `json:"attached"`          // false for a popup the Page has not switched to yet
	Adopted  bool   `json:"adopted,omitempty"` // attached with AttachTab: CloseTab only lets go of it
}

// adoptPopups turns the tabs that pages of the Page opened (window.open,
// target=_blank) into tabs of the Page, not attached until switched to.
func (p *Page) adoptPopups() {
	p.tabsMu.Lock()
	defer p.tabsMu.Unlock()
	known := map[target.ID]bool{}
	for _, t := range p.tabs {
		known[t.targetID] = true
	}
	for _, t := range slices.Clone(p.tabs) {
		t.mu.Lock()
		pops := slices.Clone(t.popups)
		t.mu.Unlock()
		for _, pp := range pops {
			if known[pp.id] {
				continue
			}
			known[pp.id] = true
			nt := p.unattachedTabLocked()
			nt.targetID = pp.id
			nt.pendingURL = pp.url
			nt.opener = t
			// A window the person's tab opened is the person's too (a
			// compose window of a shared mail tab): the Page lets go of
			// it, never closes it, and a policy asks as for the opener.
			nt.adopted = t.adopted
			p.tabs = append(p.tabs, nt)
		}
	}
}

// Tabs lists the tabs of the Page: the tab given to New, the tabs opened with
// NewTab, and the tabs its pages opened.
func (p *Page) Tabs(ctx context.Context) ([]TabInfo, error) {
	p.adoptPopups()
	p.tabsMu.Lock()
	if p.closed {
		p.tabsMu.Unlock()
		return nil, ErrClosed
	}
	tabs := slices.Clone(p.tabs)
	cur := p.cur
	p.tabsMu.Unlock()
	var out []TabInfo
	for _, t := range tabs {
		t.mu.Lock()
		closed := t.closed
		t.mu.Unlock()
		if closed {
			p.forget(t)
			continue
		}
		ti := TabInfo{ID: t.id, TargetID: string(t.targetID), Current: t == cur, Opened: !t.adopted && (t.cancel != nil || t.ctx == nil), Attached: t.ctx != nil, Adopted: t.adopted}
		if t.ctx == nil {
			ti.URL = t.pendingURL
			if t.opener != nil {
				t.opener.mu.Lock()
				for _, pp := range t.opener.popups {
					if pp.id == t.targetID {
						ti.URL = pp.url
					}
				}
				t.opener.mu.Unlock()
			}
		} else {
			ictx, cancel := within(t.ctx, ctx, 5*time.Second)
			res, err := chromedp.Call(ictx, target.GetTargetInfo, target.GetTargetInfoParams{TargetID: t.targetID})
			cancel()
			if err == nil && res.TargetInfo != nil {
				ti.URL, ti.Title = res.TargetInfo.URL, res.TargetInfo.Title
			}

		}
		out = append(out, ti)
	}
	return out, nil
}

// forget removes a closed tab from the list.
func (p *Page) forget(t *tab) {
	p.tabsMu.Lock()
	defer p.tabsMu.Unlock()
	p.tabs = slices.DeleteFunc(p.tabs, func(x *tab) bool { return x == t })
	if p.cur == t {
		p.cur = nil
		if len(p.tabs) > 0 {
			p.cur = p.tabs[0]
		}
	}
}

// NewTab opens a tab with chromedp.NewContext(parent, opts...) — parent from
// WithTabParent, opts from WithTabOptions — so the allocator's rules for
// opening and closing tabs hold; it makes the tab current and loads url in it
// when url is not empty.
func (p *Page) NewTab(ctx context.Context, url string) (TabInfo, error) {
	p.mu.Lock()
	tctx, cancel := chromedp.NewContext(p.cfg.tabParent, p.cfg.tabOptions...)
	p.tabsMu.Lock()
	t := p.newTabLocked(tctx, cancel)
	p.tabsMu.Unlock()
	err := p.attachBounded(ctx, t)
	if err == nil {
		p.tabsMu.Lock()
		p.tabs = append(p.tabs, t)
		p.cur = t
		p.tabsMu.Unlock()
	}
	p.mu.Unlock()
	if err != nil {
		cancel()
		return TabInfo{}, fmt.Errorf("opening a tab: %w", err)
	}
	if url != "" {
		if err := p.Navigate(ctx, url); err != nil {
			return TabInfo{ID: t.id, TargetID: string(t.targetID), Current: true, Opened: true, Attached: true}, err
		}
	}
	return p.tabInfo(ctx, t)
}

// attachBounded attaches t, giving up when ctx ends.
func (p *Page) attachBounded(ctx context.Context, t *tab) error {
	done := make(chan error, 1)
	go func() { done <- p.attach(t) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		go func() {
			if <-done == nil && t.cancel != nil {
				t.cancel()
			}
		}()
		return ctx.Err()
	}
}

func (p *Page) tabInfo(ctx context.Context, t *tab) (TabInfo, error) {
	tabs, err := p.Tabs(ctx)
	if err != nil {
		return TabInfo{}, err
	}
	for _, ti := range tabs {
		if ti.ID == t.id {
			return ti, nil
		}
	}
	return TabInfo{}, fmt.Errorf("tab %s: %w", t.id, ErrTabClosed)
}

func (p *Page) findTab(id string) (*tab, error) {
	p.adoptPopups()
	p.tabsMu.Lock()
	defer p.tabsMu.Unlock()
	id = strings.TrimSpace(id)
	for _, t := range p.tabs {
		if t.id == id || string(t.targetID) == id {
			return t, nil
		}
	}
	var ids []string
	for _, t := range p.tabs {
		ids = append(ids, t.id)
	}
	return nil, fmt.Errorf("%w: no tab %q; the tabs are %s", ErrTabClosed, id, strings.Join(ids, ", "))
}

// SwitchTab makes tab id the current tab and brings it to the front,
// attaching to it first when a page opened it.
func (p *Page) SwitchTab(ctx context.Context, id string) error {
	t, err := p.findTab(id)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if t.ctx == nil {
		opts := []chromedp.ContextOption{chromedp.WithTargetID(t.targetID)}
		if t.adopted {
			opts = append(opts, chromedp.WithDetachOnCancel())
		}
		tctx, cancel := chromedp.NewContext(p.cfg.tabParent, opts...)
		t.ctx, t.cancel = tctx, cancel
		if err := p.attachBounded(ctx, t); err != nil {
			cancel()
			p.forget(t)
			return fmt.Errorf("attaching to tab %s: %w", id, err)
		}
	}
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	if closed {
		p.forget(t)
		return fmt.Errorf("tab %s: %w", id, ErrTabClosed)
	}
	p.tabsMu.Lock()
	p.cur = t
	p.tabsMu.Unlock()
	bctx, cancel := context.WithTimeout(t.ctx, 5*time.Second)
	defer cancel()
	if _, err := chromedp.Call(bctx, cdppage.BringToFront, cdp.Empty{}); err != nil {
		return fmt.Errorf("bringing tab %s to the front: %w", id, err)
	}
	return nil
}

// CloseTab closes a tab that the Page or one of its pages opened, by
// canceling its chromedp context, and switches to the first tab when it was
// the current one. The tab given to New is its owner's to close; a tab from
// AttachTab stays open, and the Page lets go of it.
func (p *Page) CloseTab(ctx context.Context, id string) error {
	t, err := p.findTab(id)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if t.ctx == nil && t.adopted {
		// A window of the person's tab, never attached: nothing to let
		// go of, and it is not the Page's to close.
		p.forget(t)
		return nil
	}
	if t.ctx == nil {
		// A popup not attached yet: attach only to close it.
		t.ctx, t.cancel = chromedp.NewContext(p.cfg.tabParent, chromedp.WithTargetID(t.targetID))
		if err := chromedp.Do(t.ctx); err != nil {
			t.cancel()
			p.forget(t)
			return nil
		}
	}
	if t.cancel == nil {
		return fmt.Errorf("%w: tab %s was given to page.New; its owner closes it by canceling its context", ErrUnsupported, id)
	}
	// A tab from AttachTab was attached WithDetachOnCancel: canceling
	// detaches and leaves it open.
	t.cancel()
	p.forget(t)
	return nil
}
