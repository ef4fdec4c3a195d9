package capture

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"

	"github.com/livetab/livetab/internal/hit"
)

// pageDownloadWillBegin is the tab-level twin of Browser.downloadWillBegin.
// cdproto dropped it as deprecated, but Chrome still sends it, and it is the
// only download event a tab session gets through chrome.debugger.
const pageDownloadWillBegin = "Page.downloadWillBegin"

// Download runs trigger (a click on a "Download" button, a navigation to an
// attachment...) and captures the file the browser downloads because of it
// (rung 3). The browser-level Browser.setDownloadBehavior and
// Browser.download* events work on plain Chrome and through livetab's
// relay, which answers them from chrome.downloads; the bytes are streamed
// from the downloaded file.
//
// If the tab announces the download (Page.downloadWillBegin) but the browser
// level stays silent for DownloadStartWait, the URL is read in the page
// instead, and the result says RungPage.
func (c *Capturer) Download(ctx context.Context, trigger func(ctx context.Context) error, opts ...Option) (*Result, error) {
	return c.run(ctx, func(ctx context.Context) (*Result, error) {
		res, err := c.download(ctx, c.opts(opts), trigger)
		if err != nil {
			return nil, fmt.Errorf("capture: a download: %w", err)
		}
		return res, nil
	})
}

// ensureDownloads makes the browser download into the Capturer's directory
// and report downloads, once per Capturer.
func (c *Capturer) ensureDownloads(ctx context.Context, cfg *config) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dlBehaviour {
		return c.dlDir, nil
	}
	dir := cfg.downloadDir
	owned := false
	if dir == "" {
		d, err := os.MkdirTemp("", "livetab-downloads-")
		if err != nil {
			return "", fmt.Errorf("making a download directory: %w", err)
		}
		dir, owned = d, true
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("making the download directory: %w", err)
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	_, err := cdp.Call(ctx, c.b, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior:      browser.SetDownloadBehaviorBehaviorAllowAndName,
		DownloadPath:  dir,
		EventsEnabled: new(true),
	})
	if err != nil {
		if owned {
			os.RemoveAll(dir)
		}
		return "", fmt.Errorf("Browser.setDownloadBehavior: %w", err)
	}
	c.dlDir, c.dlOwned, c.dlBehaviour = dir, owned, true
	return dir, nil
}

func (c *Capturer) resetDownloads(ctx context.Context) {
	cdp.Call(ctx, c.b, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorDefault,
	})
}

// ownsFrame says whether a download's frame is in this tab. An empty frame
// id (a relay that cannot tell) counts as ours.
func (c *Capturer) ownsFrame(ctx context.Context, id cdp.FrameID) bool {
	if id == "" || string(id) == string(c.t.TargetID) {
		return true
	}
	tree, err := cdp.Call(ctx, c.t, page.GetFrameTree, cdp.Empty{})
	if err != nil || tree.FrameTree == nil {
		return true
	}
	var walk func(t *page.FrameTree) bool
	walk = func(t *page.FrameTree) bool {
		if t.Frame != nil && t.Frame.ID == id {
			return true
		}
		for _, ch := range t.ChildFrames {
			if walk(ch) {
				return true
			}
		}
		return false
	}
	return walk(tree.FrameTree)
}

func (c *Capturer) download(ctx context.Context, cfg *config, trigger func(ctx context.Context) error) (*Result, error) {
	return c.downloadAs(ctx, cfg, nil, trigger)
}

// downloadAs runs trigger and captures the download it starts. A non-nil
// saved describes a blob the page saved (RungSave): the result takes its
// name, type and size from it, and a download that does not begin within
// cfg.downloadStart is an error rather than a wait for the caller's
// deadline.
func (c *Capturer) downloadAs(ctx context.Context, cfg *config, saved *meta, trigger func(ctx context.Context) error) (*Result, error) {
	dir, err := c.ensureDownloads(ctx, cfg)
	if err != nil {
		return nil, err
	}
	// Subscribe before the trigger so that no event is missed.
	begins, stopB := c.b.Subscribe(browser.DownloadWillBegin.Method)
	defer stopB()
	progress, stopP := c.b.Subscribe(browser.DownloadProgress.Method)
	defer stopP()
	pageBegins, stopPB := c.t.Subscribe(pageDownloadWillBegin)
	defer stopPB()
	if err := trigger(ctx); err != nil {
		return nil, c.cdpErr(fmt.Errorf("starting the download: %w", err))
	}

	var (
		guid, url, suggested string
		early                = map[string]browser.EventDownloadProgress{} // progress of downloads not yet matched
		fallback             <-chan time.Time
		noStart              <-chan time.Time
		pageEv               browser.EventDownloadWillBegin // same fields
	)
	if saved != nil {
		t := time.NewTimer(cfg.downloadStart)
		defer t.Stop()
		noStart = t.C
	}
	finish := func(ev browser.EventDownloadProgress) (*Result, error) {
		switch ev.State {
		case browser.DownloadProgressStateCompleted:
			return c.readDownload(ctx, cfg, dir, guid, url, suggested, ev, saved)
		case browser.DownloadProgressStateCanceled:
			return nil, fmt.Errorf("%w: the browser canceled %s after %d bytes (blocked, interrupted, or refused by the user)", ErrDownloadFailed, shortURL(url), int64(ev.ReceivedBytes))
		}
		if cfg.progress != nil {
			total := int64(ev.TotalBytes)
			if total == 0 {
				total = -1
			}
			cfg.progress(Progress{Rung: RungDownload, Done: int64(ev.ReceivedBytes), Total: total})
		}
		return nil, nil
	}
	for {
		select {
		case <-ctx.Done():
			if guid != "" {
				cctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				cdp.Call(cctx, c.b, browser.CancelDownload, browser.CancelDownloadParams{GUID: guid})
				// A download that finished as it was canceled still gets
				// its file moved into dir (livetab moves it on completion):
				// wait, within the bound, for its last word first.
				c.settle(cctx, progress, guid)
				cancel()
				// The partial file, whatever suffix the browser gave it.
				if parts, _ := filepath.Glob(filepath.Join(dir, guid+"*")); parts != nil {
					for _, p := range parts {
						os.Remove(p)
					}
				}
			}
			return nil, fmt.Errorf("waiting for the download: %w", ctx.Err())
		case raw := <-begins:
			var ev browser.EventDownloadWillBegin
			if jsonv2.Unmarshal(raw, &ev) != nil || guid != "" || !c.ownsFrame(ctx, ev.FrameID) || !c.claim(ev.GUID) {
				continue
			}
			defer c.unclaim(ev.GUID)
			guid, url, suggested, fallback, noStart = ev.GUID, ev.URL, ev.SuggestedFilename, nil, nil
			if p, ok := early[guid]; ok {
				if res, err := finish(p); res != nil || err != nil {
					return res, err
				}
			}
			early = nil
		case raw := <-progress:
			var ev browser.EventDownloadProgress
			if jsonv2.Unmarshal(raw, &ev) != nil {
				continue
			}
			if guid == "" {
				// The two subscriptions are separate queues: a progress
				// event can be read before its downloadWillBegin.
				early[ev.GUID] = ev
				continue
			}
			if ev.GUID != guid {
				continue
			}
			if res, err := finish(ev); res != nil || err != nil {
				return res, err
			}
		case raw := <-pageBegins:
			if guid != "" || fallback != nil || jsonv2.Unmarshal(raw, &pageEv) != nil {
				continue
			}
			fallback, noStart = time.After(cfg.downloadStart), nil
		case <-noStart:
			return nil, fmt.Errorf("%w: the page's download of the blob did not begin within %v (a page or frame sandboxed without allow-downloads, or the browser blocks this site's downloads)", ErrDownloadFailed, cfg.downloadStart)
		case <-fallback:
			if saved != nil && pageEv.GUID != "" {
				// It may yet begin; the slices read the blob instead.
				cctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				cdp.Call(cctx, c.b, browser.CancelDownload, browser.CancelDownloadParams{GUID: pageEv.GUID})
				cancel()
			}
			if !cfg.allowed(RungPage) || saved != nil {
				return nil, fmt.Errorf("%w: the tab started downloading %s but the browser sent no Browser.downloadWillBegin within %v (the connection does not relay downloads); allow RungPage to read the URL in the page", ErrDownloadFailed, shortURL(pageEv.URL), cfg.downloadStart)
			}
			miss := fmt.Errorf("the tab started downloading %s but the browser sent no Browser.downloadWillBegin within %v", shortURL(pageEv.URL), cfg.downloadStart)
			res, err := c.refetch(ctx, cfg, pageEv.URL, pageEv.SuggestedFilename)
			if err != nil {
				return nil, fmt.Errorf("%w; reading the URL in the page instead: %w", miss, err)
			}
			res.Attempts = append(res.Attempts, Attempt{Rung: RungDownload, Err: miss})
			return res, nil
		}
	}
}

// settle waits until download guid completes or is canceled, or ctx ends.
func (c *Capturer) settle(ctx context.Context, progress <-chan jsonv2.Value, guid string) {
	for {
		select {
		case <-ctx.Done():
			return
		case raw := <-progress:
			var ev browser.EventDownloadProgress
			if jsonv2.Unmarshal(raw, &ev) == nil && ev.GUID == guid && ev.State != browser.DownloadProgressStateInProgress {
				return
			}
		}
	}
}

// claim marks a download as taken by one Download call, so that calls
// running at the same time do not take the same file.
func (c *Capturer) claim(guid string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.claimed == nil {
		c.claimed = map[string]bool{}
	}
	if c.claimed[guid] {
		return false
	}
	c.claimed[guid] = true
	return true
}

func (c *Capturer) unclaim(guid string) {
	c.mu.Lock()
	delete(c.claimed, guid)
	c.mu.Unlock()
}

// refetch reads a download's URL in the page (rung 2).
func (c *Capturer) refetch(ctx context.Context, cfg *config, url, name string) (*Result, error) {
	group := c.newGroup()
	defer c.releaseGroup(group)
	l, err := c.newLib(ctx, "", group)
	if err != nil {
		return nil, err
	}
	cfg2 := *cfg
	if cfg2.name == "" {
		cfg2.name = name
	}
	return c.inPage(ctx, &cfg2, l, val(url), desc{Kind: "url", URL: url}, nil)
}

// readDownload streams a completed download into the sink. Files in the
// Capturer's own directory are removed afterwards; a file the browser put
// elsewhere (the user's Downloads folder, through livetab) is left where the
// user expects it.
func (c *Capturer) readDownload(ctx context.Context, cfg *config, dir, guid, url, suggested string, ev browser.EventDownloadProgress, saved *meta) (*Result, error) {
	path := ev.FilePath
	if path == "" {
		path = filepath.Join(dir, guid)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: the browser saved %s at %s, which this program cannot open (is the browser on another machine?): %w", ErrDownloadFailed, shortURL(url), path, err)
	}
	defer f.Close()
	if rel, err := filepath.Rel(dir, path); err == nil && !strings.HasPrefix(rel, "..") {
		defer os.Remove(path)
	}
	size := int64(-1)
	if st, err := f.Stat(); err == nil {
		size = st.Size()
	}
	m := meta{name: nameFrom(cfg.name, suggested, url), source: url, size: size, rung: RungDownload}
	if saved != nil {
		if size != saved.size {
			return nil, fmt.Errorf("%w: the browser saved %d bytes of the page's %d-byte blob", ErrDownloadFailed, size, saved.size)
		}
		m = *saved
	}
	if cfg.progress != nil {
		// The file is read from here on; the download's own progress was
		// reported while it ran.
		cfg.progress(Progress{Rung: m.rung, Done: 0, Total: size})
	}
	return c.store(ctx, cfg, m, &readerSource{r: f, chunk: cfg.chunk})
}

type readerSource struct {
	r     io.Reader
	chunk int
	buf   []byte
}

func (s *readerSource) next(ctx context.Context) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.buf == nil {
		s.buf = make([]byte, s.chunk)
	}
	n, err := io.ReadFull(s.r, s.buf)
	if n > 0 {
		return s.buf[:n], nil
	}
	if err == io.ErrUnexpectedEOF {
		err = io.EOF
	}
	return nil, err
}

// click clicks el with real mouse events at its center, as a person would
// (some downloads need a trusted gesture); an element with no box is
// clicked by script instead.
func (c *Capturer) click(ctx context.Context, l *lib, el runtime.RemoteObjectID) error {
	cdp.Call(ctx, c.t, dom.ScrollIntoViewIfNeeded, dom.ScrollIntoViewIfNeededParams{ObjectID: el})
	q, err := cdp.Call(ctx, c.t, dom.GetContentQuads, dom.GetContentQuadsParams{ObjectID: el})
	if err != nil || len(q.Quads) == 0 || len(q.Quads[0]) < 8 {
		return l.Call(ctx, "click", nil, obj(el))
	}
	quad := q.Quads[0]
	var x, y float64
	for i := 0; i < 8; i += 2 {
		x += quad[i] / 4
		y += quad[i+1] / 4
	}
	// A frame over the element (a hostile page's transparent frame of
	// another site) would take the press: the browser's own hit test says
	// (internal/hit), and the element is clicked by script instead, which
	// reaches it alone.
	if n, ok, err := hit.At(ctx, c.t, x, y); err == nil && ok && n.Owner() {
		if b, err := hit.Backend(ctx, c.t, el); err != nil || b != n.Backend {
			return l.Call(ctx, "click", nil, obj(el))
		}
	}
	for _, typ := range []input.DispatchMouseEventType{input.DispatchMouseEventTypeMousePressed, input.DispatchMouseEventTypeMouseReleased} {
		_, err := cdp.Call(ctx, c.t, input.DispatchMouseEvent, input.DispatchMouseEventParams{
			Type: typ, X: x, Y: y, Button: input.MouseButtonLeft, ClickCount: 1,
		})
		if err != nil {
			return fmt.Errorf("clicking: %w", err)
		}
	}
	return nil
}
