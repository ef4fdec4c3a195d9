package page

import (
	"context"
	"errors"
	"fmt"
	"strings"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// pageInfo is where a tab is.
type pageInfo struct {
	URL        string  `json:"url"`
	Title      string  `json:"title"`
	ReadyState string  `json:"readyState"`
	SX         float64 `json:"sx"`
	SY         float64 `json:"sy"`
	VW         float64 `json:"vw"`
	VH         float64 `json:"vh"`
	OW         float64 `json:"ow"` // the window, which a viewport the tab emulates can exceed
	OH         float64 `json:"oh"`
}

func (a *action) info() (pageInfo, error) {
	var pi pageInfo
	err := a.call(a.t.libs.main, "info", &pi)
	return pi, err
}

// where describes the page the tab shows, for a result text.
func (a *action) where() string {
	pi, err := a.info()
	if err != nil {
		return ""
	}
	return "now at " + wrapUntrusted(fmt.Sprintf("url: %s\ntitle: %q", pi.URL, pi.Title))
}

// NormalizeURL adds https:// to a bare host name, as a browser's address
// bar does, and leaves every other URL alone. Navigate loads, and a guard
// is shown, the URL it returns.
func NormalizeURL(u string) string {
	return normalizeURL(u)
}

func normalizeURL(u string) string {
	u = strings.TrimSpace(u)
	if strings.Contains(u, "://") || strings.HasPrefix(u, "about:") || strings.HasPrefix(u, "data:") ||
		strings.HasPrefix(u, "javascript:") || strings.HasPrefix(u, "file:") || strings.HasPrefix(u, "chrome:") {
		return u
	}
	return "https://" + u
}

// Navigate loads url in the current tab and waits for its load event, up to
// the navigation timeout. A page whose document is ready but whose load event
// is late (a slow image) counts as loaded.
func (p *Page) Navigate(ctx context.Context, url string) error {
	_, err := p.run(ctx, false, navAction(url), func(a *action) (string, error) { return a.navigate(url) })
	return err
}

// navAction is the guard's view of a navigation to url.
func navAction(url string) Action {
	return Action{Kind: KindNavigate, Op: "navigate", Target: normalizeURL(url)}
}

func (a *action) navigate(url string) (string, error) {
	url = normalizeURL(url)
	pre := a.preloadLib()
	err := a.loadWait(chromedp.Navigate(url))
	pre(err == nil)
	if err != nil {
		if berr := firstBlocked(a.t.blockedSince(a.blockSeq)); berr != nil {
			a.blockReported = true
			// The guard aborts it: the tab stays on the page it was on.
			return "", fmt.Errorf("loading %s: %w; the tab stays at %s", url, berr, a.t.currentURL())
		}
		var le *chromedp.LoadError
		if errors.As(err, &le) {
			return "", fmt.Errorf("loading %s: %w; check the URL, or whether the site is up", url, err)
		}
		return "", err
	}
	return "navigated; " + a.settledWhere(), nil
}

// preloadLib loads the page library into the document a navigation
// commits, and starts watching it, while the page goes on loading rather
// than after its load event: the result and the settling need the
// library, whose evaluation takes 10-25 ms, and a document watched since
// it began has often been quiet long enough by the time it loaded. The function it returns ends the preload: it waits for a
// started one to finish when the navigation loaded, and drops it else.
func (a *action) preloadLib() func(loaded bool) {
	t := a.t
	ctx, cancel := context.WithCancel(a.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var seq uint64
		if t.waitState(ctx, func() bool { seq = t.navSeq; return t.navSeq != a.navSeq || t.closed }) != nil {
			return
		}
		// The watch starts with the document, so that once it loaded the
		// settling knows how long it has been quiet. A failure is the
		// document's next call's to report: it loads the library again.
		if a.call(t.libs.main, "watch", nil) == nil {
			t.mu.Lock()
			if t.navSeq == seq {
				a.docWatched = seq
			}
			t.mu.Unlock()
		}
	}()
	return func(loaded bool) {
		if !loaded || !a.navigated() {
			cancel()
		}
		<-done
		cancel()
	}
}

// loadWait runs a navigating action with the navigation timeout and accepts a
// page whose document is ready when the load event is late.
func (a *action) loadWait(nav chromedp.Action[chromedp.Void]) error {
	nctx, cancel := context.WithTimeout(a.ctx, a.t.p.cfg.navTimeout)
	defer cancel()
	err := chromedp.Do(nctx, nav)
	if err == nil {
		return nil
	}
	if nctx.Err() != nil && a.ctx.Err() == nil {
		if pi, ierr := a.info(); ierr == nil && pi.ReadyState != "loading" {
			a.note = append(a.note, "the load event did not come within "+a.t.p.cfg.navTimeout.String()+", but the document is ready")
			return nil
		}
		return fmt.Errorf("%w: the page did not load within %v", ErrTimeout, a.t.p.cfg.navTimeout)
	}
	return err
}

// Reload reloads the current tab and waits for it to load.
func (p *Page) Reload(ctx context.Context) error {
	_, err := p.run(ctx, false, Action{Kind: KindNavigate, Op: "reload"}, func(a *action) (string, error) { return a.reload() })
	return err
}

func (a *action) reload() (string, error) {
	if err := a.loadWait(chromedp.Reload()); err != nil {
		return "", err
	}
	return "reloaded; " + a.settledWhere(), nil
}

// Back goes one step back in the tab's history and waits for the page.
func (p *Page) Back(ctx context.Context) error {
	_, err := p.run(ctx, false, Action{Kind: KindNavigate, Op: "back"}, func(a *action) (string, error) { return a.history(-1) })
	return err
}

// Forward goes one step forward in the tab's history and waits for the page.
func (p *Page) Forward(ctx context.Context) error {
	_, err := p.run(ctx, false, Action{Kind: KindNavigate, Op: "forward"}, func(a *action) (string, error) { return a.history(1) })
	return err
}

// history moves by delta in the history. It does not use chromedp's
// NavigateBack: a page restored from the back/forward cache fires no load
// event, and that action waits for one.
func (a *action) history(delta int) (string, error) {
	h, err := chromedp.Run(a.ctx, chromedp.NavigationEntries())
	if err != nil {
		return "", err
	}
	i := int(h.CurrentIndex) + delta
	if i < 0 || i >= len(h.Entries) {
		dir := "back"
		if delta > 0 {
			dir = "forward"
		}
		return "", fmt.Errorf("%w: there is no page to go %s to", ErrUnsupported, dir)
	}
	if _, err := chromedp.Call(a.ctx, cdppage.NavigateToHistoryEntry, cdppage.NavigateToHistoryEntryParams{EntryID: h.Entries[i].ID}); err != nil {
		return "", err
	}
	t := a.t
	nctx, cancel := context.WithTimeout(a.ctx, t.p.cfg.navTimeout)
	defer cancel()
	err = t.waitState(nctx, func() bool {
		return (t.navSeq != a.navSeq || t.withinDoc != a.within) && !t.loading || t.closed
	})
	if err != nil && a.ctx.Err() == nil {
		return "", fmt.Errorf("%w: the page did not come back within %v", ErrTimeout, t.p.cfg.navTimeout)
	}
	if err != nil {
		return "", err
	}
	verb := "went back"
	if delta > 0 {
		verb = "went forward"
	}
	return verb + "; " + a.settledWhere(), nil
}

// currentURL is the URL of the tab's main frame, as its events said.
func (t *tab) currentURL() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.url == "" {
		return "its page"
	}
	return t.url
}
