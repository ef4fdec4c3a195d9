package capture

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	goio "io"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/io"
	"github.com/chromedp/cdproto/runtime"

	"github.com/livetab/livetab/livetabcdp"
)

// desc is what the library says of an element's media.
type desc struct {
	Kind   string `json:"kind"`
	URL    string `json:"url"`
	Name   string `json:"name"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
	Tag    string `json:"tag"`
	Hint   string `json:"hint"`
}

// opened is a blob the library registered.
type opened struct {
	ID   int64  `json:"id"`
	Size int64  `json:"size"`
	Type string `json:"type"`
	Name string `json:"name"`
	URL  string `json:"url"`
}

// meta is what store needs besides the bytes.
type meta struct {
	name, declared, source string
	hint                   string // words for a name when there is none
	size                   int64
	rung                   Rung
	width, height          int
}

// errSkip reports a candidate that WaitNew's filter turned down once its
// size or type was known.
var errSkip = errors.New("capture: the media does not match the filter")

// check is a filter applied before any byte moves: declared type and size.
type check func(mime string, size int64) error

// Element captures the media behind an element: an <img> (its currentSrc),
// <video>, <audio>, <source>, <canvas>, SVG <image>, <object>/<embed>, a
// link, an element with a CSS background image, or a wrapper around one of
// these. A button or link with no media of its own is clicked and its
// download captured (rung 3).
func (c *Capturer) Element(ctx context.Context, r Ref, opts ...Option) (*Result, error) {
	return c.run(ctx, func(ctx context.Context) (*Result, error) { return c.element(ctx, r, c.opts(opts)) })
}

func (c *Capturer) element(ctx context.Context, r Ref, cfg *config) (*Result, error) {
	group := c.newGroup()
	defer c.releaseGroup(group)
	l, el, err := c.resolve(ctx, r, group)
	if err != nil {
		return nil, err
	}
	var d desc
	if err := l.Call(ctx, "describe", &d, obj(el)); err != nil {
		return nil, fmt.Errorf("capture: %s: %w", r, err)
	}
	res, err := c.ladder(ctx, cfg, l, el, d, nil)
	if err != nil {
		return nil, fmt.Errorf("capture: %s: %w", r, err)
	}
	return res, nil
}

// URL captures what a URL the page can see holds: http(s) (with the page's
// cookies), blob: URLs the page made, data: URLs. A response the Capturer
// saw for the URL is used first (rung 1).
func (c *Capturer) URL(ctx context.Context, url string, opts ...Option) (*Result, error) {
	return c.run(ctx, func(ctx context.Context) (*Result, error) { return c.url(ctx, url, c.opts(opts)) })
}

func (c *Capturer) url(ctx context.Context, url string, cfg *config) (*Result, error) {
	group := c.newGroup()
	defer c.releaseGroup(group)
	l, err := c.newLib(ctx, "", group)
	if err != nil {
		return nil, err
	}
	res, err := c.ladder(ctx, cfg, l, "", desc{Kind: "url", URL: url}, cfg.check)
	if err != nil {
		return nil, fmt.Errorf("capture: %s: %w", shortURL(url), err)
	}
	return res, nil
}

func isHTTP(u string) bool {
	return strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://")
}

// ladder captures the media of el (or of d.URL when el is ""), cheapest
// rung first.
func (c *Capturer) ladder(ctx context.Context, cfg *config, l *lib, el runtime.RemoteObjectID, d desc, chk check) (*Result, error) {
	var attempts []Attempt
	done := func(res *Result, err error) (*Result, error) {
		if err != nil {
			return nil, withAttempts(err, attempts)
		}
		res.Attempts = append(attempts, res.Attempts...)
		return res, nil
	}
	if d.Kind == "button" {
		if !cfg.allowed(RungDownload) {
			return nil, fmt.Errorf("%w: the <%s> is a control without media; allow RungDownload to click it and capture its download", ErrNoMedia, d.Tag)
		}
		return done(c.download(ctx, cfg, func(ctx context.Context) error { return c.click(ctx, l, el) }))
	}
	if isHTTP(d.URL) && cfg.allowed(RungBody) {
		// The newest response may be one Chrome kept no body for (a
		// fetch answered from the cache): try a few.
		for _, r := range c.w.lookup(d.URL, 3) {
			if chk != nil {
				if err := chk(r.mime, r.size()); err != nil {
					return nil, err
				}
			}
			res, err := c.body(ctx, &r, cfg, d)
			if err == nil {
				return done(res, nil)
			}
			if ctx.Err() != nil || errors.Is(err, ErrTabClosed) {
				return nil, err
			}
			attempts = append(attempts, Attempt{Rung: RungBody, Err: err})
		}
	}
	// save tries RungSave; final says the ladder ends with its result.
	// copyFails: a failure means no copy of the media can be saved either.
	save := func(copyFails func(error) bool) (res *Result, final bool, err error) {
		res, err = c.saveURL(ctx, cfg, l, d, chk)
		switch {
		case err == nil:
			return res, true, nil
		case errors.Is(err, errBelowSave):
		case ctx.Err() != nil || errors.Is(err, ErrTabClosed) || errors.Is(err, ErrGone) || chk != nil && errors.Is(err, errSkip):
			return nil, true, err
		default:
			attempts = append(attempts, Attempt{Rung: RungSave, Err: err})
			if copyFails(err) {
				// The page could not download it; nor will it a copy.
				cfg2 := *cfg
				if cfg2.channelAbove == 0 {
					cfg2.channelAbove = max(cfg2.saveAbove, 1)
				}
				cfg2.saveAbove = -1
				cfg = &cfg2
			}
		}
		return nil, false, nil
	}
	if isHTTP(d.URL) && cfg.allowed(RungSave) && cfg.saveAbove >= 0 {
		if res, final, err := save(func(err error) bool { return errors.Is(err, ErrDownloadFailed) }); final {
			return done(res, err)
		}
	}
	if !cfg.allowed(RungPage) && !cfg.allowed(RungSave) && !cfg.allowed(RungChannel) {
		if len(attempts) == 0 {
			return nil, fmt.Errorf("%w: no allowed rung applies to this media (%s)", ErrNoMedia, d.Kind)
		}
		return done(nil, attempts[len(attempts)-1].Err)
	}
	if strings.HasPrefix(d.URL, "blob:") && cfg.allowed(RungSave) {
		if res, final, err := save(func(error) bool { return true }); final {
			return done(res, err)
		}
	}
	if !cfg.allowed(RungPage) && (!cfg.allowed(RungSave) && !cfg.allowed(RungChannel) || cfg.saveAbove < 0) {
		if len(attempts) == 0 {
			return nil, fmt.Errorf("%w: no allowed rung applies to this media (%s)", ErrNoMedia, d.Kind)
		}
		a := attempts[len(attempts)-1]
		return done(nil, withAttempts(a.Err, attempts[:len(attempts)-1]))
	}
	target := val(d.URL)
	if el != "" {
		target = obj(el)
	}
	res, err := c.inPage(ctx, cfg, l, target, d, chk)
	if err != nil && d.Kind == "link" && cfg.allowed(RungDownload) && ctx.Err() == nil &&
		(errors.Is(err, ErrCrossOrigin) || errors.Is(err, ErrHTTP)) {
		// The page may not read the link's target, but the browser may
		// download it when the link is followed.
		attempts = append(attempts, Attempt{Rung: RungPage, Err: err})
		return done(c.download(ctx, cfg, func(ctx context.Context) error { return c.click(ctx, l, el) }))
	}
	return done(res, err)
}

func withAttempts(err error, attempts []Attempt) error {
	if len(attempts) == 0 {
		return err
	}
	var b strings.Builder
	for _, a := range attempts {
		fmt.Fprintf(&b, "; %s failed first: %v", a.Rung, a.Err)
	}
	return fmt.Errorf("%w%s", err, b.String())
}

// inPage is rung 2: the library fetches the source (or encodes the canvas)
// into a blob, and Go reads it in slices.
func (c *Capturer) inPage(ctx context.Context, cfg *config, l *lib, target *runtime.CallArgument, d desc, chk check) (*Result, error) {
	var o opened
	popts := map[string]any{"canvasType": cfg.canvasType, "canvasQuality": cfg.canvasQuality}
	if err := l.Call(ctx, "open", &o, target, val(popts)); err != nil {
		return nil, err
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		l.Call(rctx, "release", nil, val(o.ID))
		cancel()
	}()
	if chk != nil {
		if err := chk(o.Type, o.Size); err != nil {
			return nil, err
		}
	}
	src := o.URL
	if src == "" {
		src = d.URL
	}
	m := meta{
		name: nameFrom(cfg.name, o.Name, src), declared: o.Type, source: src, hint: d.Hint,
		size: o.Size, rung: RungPage, width: d.Width, height: d.Height,
	}
	var failed []Attempt
	big := cfg.saveAbove >= 0 && o.Size >= cfg.saveAbove && o.Size > 0
	finish := func(res *Result, err error) (*Result, error) {
		if err != nil {
			return nil, withAttempts(err, failed)
		}
		res.Attempts = append(res.Attempts, failed...)
		return res, nil
	}
	if big && cfg.allowed(RungSave) {
		res, err := c.save(ctx, cfg, l, o.ID, m)
		if err == nil || ctx.Err() != nil || errors.Is(err, ErrTabClosed) {
			return finish(res, err)
		}
		failed = append(failed, Attempt{Rung: RungSave, Err: err})
	}
	if cfg.saveAbove < 0 && cfg.channelAbove > 0 {
		big = o.Size >= cfg.channelAbove
	}
	if big && cfg.allowed(RungChannel) {
		if !c.hasChannel(ctx) {
			if !cfg.allowed(RungSave) && !cfg.allowed(RungPage) {
				failed = append(failed, Attempt{Rung: RungChannel, Err: errNoChannel})
			}
		} else {
			res, err := c.channel(ctx, cfg, l, o.ID, m)
			if err == nil || ctx.Err() != nil || errors.Is(err, ErrTabClosed) {
				return finish(res, err)
			}
			failed = append(failed, Attempt{Rung: RungChannel, Err: err})
		}
	}
	if !cfg.allowed(RungPage) {
		if len(failed) > 0 {
			a := failed[len(failed)-1]
			failed = failed[:len(failed)-1]
			return finish(nil, a.Err)
		}
		return nil, fmt.Errorf("%w: the %d-byte %s is below the smallest size saved as a download (SaveAbove %d); allow RungPage to read it in slices", ErrNoMedia, o.Size, d.Kind, cfg.saveAbove)
	}
	return finish(c.store(ctx, cfg, m, c.blobSource(ctx, l, o.ID, o.Size, cfg.chunk)))
}

var (
	// errBelowSave: the blob is smaller than what RungSave saves.
	errBelowSave = errors.New("capture: below the size saved as a download")
	// errSaveSpent: the document already had its download.
	errSaveSpent = errors.New("capture: the page already made its one download without a person's click; a second would make the browser ask the person (\"download multiple files?\")")
)

// How RungSave has the browser download a blob (Capturer.limiter).
const (
	saveUnknown int8 = iota
	// saveByPage: the page's own <a download>, as often as wanted (plain
	// Chrome under Browser.setDownloadBehavior asks nothing).
	saveByPage
	// saveByExtension: Livetab.downloadBlob, chrome.downloads in the
	// person's Chrome, which holds it to no per-page limit.
	saveByExtension
	// saveByPageOnce: the page's own <a download> in a person's Chrome
	// whose extension lacks Livetab.downloadBlob: Chrome lets a page start
	// one download on its own, then asks the person until they click or
	// type in the page (userGesture on Runtime.callFunctionOn does not
	// count), so one per document.
	saveByPageOnce
)

// saveHow says how this browser saves, asking it the first time.
func (c *Capturer) saveHow(ctx context.Context) (int8, error) {
	c.mu.Lock()
	how := c.limiter
	c.mu.Unlock()
	if how != saveUnknown {
		return how, nil
	}
	_, err := cdp.Call(ctx, c.b, livetabcdp.GetInfo, cdp.Empty{})
	switch {
	case err == nil:
		how = saveByExtension
	case ctx.Err() != nil:
		return 0, ctx.Err()
	default:
		how = saveByPage
	}
	c.mu.Lock()
	c.limiter = how
	c.mu.Unlock()
	return how, nil
}

// saveURL is RungSave for a blob: URL the page made, or an http(s) URL of
// the page's own origin: the browser downloads the URL itself, sparing the
// copy that opening it as a blob would make (and, through livetab, the
// Network event of each chunk of the page's fetch, which crosses the
// extension). A probe gives its size and type first; an http(s) URL the
// probe cannot size (another origin, redirected, content-encoded) is left
// to the page.
func (c *Capturer) saveURL(ctx context.Context, cfg *config, l *lib, d desc, chk check) (*Result, error) {
	if isHTTP(d.URL) {
		how, err := c.saveHow(ctx)
		if err != nil {
			return nil, err
		}
		if how == saveByPageOnce {
			// The document's one download is kept for the blob it reads.
			return nil, errBelowSave
		}
	}
	var p struct {
		Size int64  `json:"size"`
		Type string `json:"type"`
	}
	if err := l.Call(ctx, "probe", &p, val(d.URL)); err != nil {
		return nil, err
	}
	if chk != nil {
		if err := chk(p.Type, p.Size); err != nil {
			return nil, err
		}
	}
	if p.Size < 0 || p.Size < cfg.saveAbove || p.Size == 0 || cfg.saveAbove < 0 {
		return nil, errBelowSave
	}
	m := meta{
		name: nameFrom(cfg.name, "", d.URL), declared: p.Type, source: d.URL, hint: d.Hint,
		size: p.Size, rung: RungSave, width: d.Width, height: d.Height,
	}
	return c.saveWith(ctx, cfg, l, m, d.URL)
}

// spendSave takes the document's one page-started download, or says that
// it is spent.
func (c *Capturer) spendSave() error {
	doc := c.w.doc()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.savedDoc == doc {
		return errSaveSpent
	}
	c.savedDoc = doc
	return nil
}

// save is RungSave for a blob the library registered: the browser
// downloads it through an object URL (revoked when the blob is released).
func (c *Capturer) save(ctx context.Context, cfg *config, l *lib, id int64, m meta) (*Result, error) {
	var u string
	if err := l.Call(ctx, "objectURL", &u, val(id)); err != nil {
		return nil, err
	}
	return c.saveWith(ctx, cfg, l, m, u)
}

// saveWith captures the download of blob: URL u as the media m. It fails,
// for the slices to take over, when no download starts within
// DownloadStartWait (a page or frame sandboxed without allow-downloads, a
// browser that blocks the site's downloads, a connection that relays no
// download events).
func (c *Capturer) saveWith(ctx context.Context, cfg *config, l *lib, m meta, u string) (*Result, error) {
	how, err := c.saveHow(ctx)
	if err != nil {
		return nil, err
	}
	if how == saveByPageOnce {
		if err := c.spendSave(); err != nil {
			return nil, err
		}
	}
	m.rung = RungSave
	cfg2 := *cfg
	cfg2.rungs = map[Rung]bool{RungSave: true} // no refetch: the slices are the fallback
	name := m.name
	if name == "" {
		name = finalName(madeName(m.hint, time.Now()), m.declared)
	}
	return c.downloadAs(ctx, &cfg2, &m, func(ctx context.Context) error {
		if how != saveByExtension {
			return l.CallGesture(ctx, "saveURL", nil, val(u), val(name))
		}
		ask := u
		if extensionSaveURL != nil {
			ask = extensionSaveURL(u)
		}
		_, err := cdp.Call(ctx, c.t, livetabcdp.DownloadBlob, livetabcdp.DownloadBlobParams{URL: ask, Filename: name})
		if livetabcdp.IsUnsupported(err) && strings.HasPrefix(u, "blob:") {
			// An extension from before Livetab.downloadBlob: the page
			// saves from now on, once per document. Any other refusal
			// (a blob the page no longer holds, too many downloads in
			// flight: "retry in …") is this capture's alone.
			c.mu.Lock()
			c.limiter = saveByPageOnce
			c.mu.Unlock()
		}
		return err
	})
}

// extensionSaveURL, when set, rewrites the URL given to
// Livetab.downloadBlob, for tests.
var extensionSaveURL func(string) string

// noIORead makes blobSource use the JavaScript reader, for tests.
var noIORead bool

// resolveBlob gives the IO handle of a Blob object. cdproto leaves it out,
// but Chrome and chrome.debugger serve it.
var resolveBlob = cdp.Command[resolveBlobParams, resolveBlobResult]{Method: "IO.resolveBlob"}

type resolveBlobParams struct {
	ObjectID runtime.RemoteObjectID `json:"objectId"`
}

type resolveBlobResult struct {
	UUID string `json:"uuid"`
}

// blobSource reads a registered blob with IO.read, which Chrome encodes to
// base64 natively, several times faster than a JavaScript string returned
// by value; a browser that refuses IO.resolveBlob gets the JavaScript
// reader.
func (c *Capturer) blobSource(ctx context.Context, l *lib, id, size int64, chunk int) chunkSource {
	inPage := func(ctx context.Context, off, n int64) ([]byte, error) { return c.read(ctx, l, id, off, int(n)) }
	if noIORead {
		return newAheadSource(ctx, inPage, size, chunk)
	}
	if ro, err := l.Ref(ctx, "blob", val(id)); err == nil && ro != "" {
		if r, err := cdp.Call(ctx, c.t, resolveBlob, resolveBlobParams{ObjectID: ro}); err == nil && r.UUID != "" {
			return newAheadSource(ctx, (&ioSlices{c: c, l: l, id: id}).read, size, chunk)
		}
	}
	return newAheadSource(ctx, inPage, size, chunk)
}

// ioSlices reads a registered blob with IO.read. Each slice gets a stream
// of its own, because concurrent reads at explicit offsets of one blob
// stream came back with wrong bytes (Chromium 156).
type ioSlices struct {
	c  *Capturer
	l  *lib
	id int64
}

func (s *ioSlices) read(ctx context.Context, off, n int64) ([]byte, error) {
	b, err := s.readSlice(ctx, off, n)
	if err != nil {
		return nil, s.c.cdpErr(fmt.Errorf("reading the blob at offset %d: %w", off, err))
	}
	return b, nil
}

// readSlice reads bytes [off, off+n) through a handle of their own: a slice
// of the blob made in the page, so that reads in flight never share a
// stream position.
func (s *ioSlices) readSlice(ctx context.Context, off, n int64) ([]byte, error) {
	// The slice objects stay in the capture's object group until it ends:
	// releasing each would cost a round trip for a few bytes of memory.
	ro, err := s.l.Ref(ctx, "slice", val(s.id), val(off), val(n))
	if err != nil {
		return nil, err
	}
	r, err := cdp.Call(ctx, s.c.t, resolveBlob, resolveBlobParams{ObjectID: ro})
	if err != nil {
		return nil, fmt.Errorf("IO.resolveBlob: %w", err)
	}
	h := io.StreamHandle("blob:" + r.UUID)
	defer func() {
		// Off the critical path: the bytes are what the reader waits for.
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			cdp.Call(ctx, s.c.t, io.Close, io.CloseParams{Handle: h})
		}()
	}()
	var out []byte
	for int64(len(out)) < n {
		rr, err := cdp.Call(ctx, s.c.t, io.Read, io.ReadParams{Handle: h, Size: n - int64(len(out))})
		if err != nil {
			return nil, fmt.Errorf("IO.read: %w", err)
		}
		if out == nil && int64(len(rr.Data)) == n {
			return rr.Data, nil
		}
		out = append(out, rr.Data...)
		if rr.EOF || len(rr.Data) == 0 {
			break
		}
	}
	return out, nil
}

// chunkSource yields an asset's bytes in order; io.EOF after the last.
type chunkSource interface {
	next(ctx context.Context) ([]byte, error)
}

type sliceSource struct {
	data  []byte
	chunk int
}

func (s *sliceSource) next(ctx context.Context) ([]byte, error) {
	if len(s.data) == 0 {
		return nil, goio.EOF
	}
	n := min(s.chunk, len(s.data))
	b := s.data[:n]
	s.data = s.data[n:]
	return b, nil
}

// pageDepth is how many slice reads are in flight: the next slice travels
// while Go hashes and writes the current one.
const pageDepth = 3

type pageResult struct {
	b   []byte
	err error
}

// aheadSource reads a registered blob in slices, a few ahead of the
// consumer: several reads in flight hide the round trip, which through the
// extension is several hops long.
type aheadSource struct {
	ctx     context.Context
	cancel  context.CancelFunc
	read    func(ctx context.Context, off, n int64) ([]byte, error)
	size    int64
	chunk   int
	off     int64 // next offset to request
	pending []chan pageResult
}

func newAheadSource(ctx context.Context, read func(ctx context.Context, off, n int64) ([]byte, error), size int64, chunk int) *aheadSource {
	ctx, cancel := context.WithCancel(ctx)
	return &aheadSource{ctx: ctx, cancel: cancel, read: read, size: size, chunk: chunk}
}

func (p *aheadSource) next(ctx context.Context) ([]byte, error) {
	for len(p.pending) < pageDepth && p.off < p.size {
		off, n := p.off, min(int64(p.chunk), p.size-p.off)
		p.off += n
		ch := make(chan pageResult, 1)
		p.pending = append(p.pending, ch)
		go func() {
			b, err := p.read(p.ctx, off, n)
			if err == nil && int64(len(b)) != n {
				err = fmt.Errorf("read %d bytes of the blob at offset %d, not %d: the blob changed", len(b), off, n)
			}
			ch <- pageResult{b, err}
		}()
	}
	if len(p.pending) == 0 {
		p.cancel()
		return nil, goio.EOF
	}
	select {
	case r := <-p.pending[0]:
		p.pending = p.pending[1:]
		if r.err != nil {
			p.cancel()
		}
		return r.b, r.err
	case <-ctx.Done():
		p.cancel()
		return nil, ctx.Err()
	}
}

// close stops the reads in flight.
func (p *aheadSource) close() { p.cancel() }

// store streams src into the sink, hashing on the way. The asset is
// committed only when every expected byte arrived and ctx is still live;
// otherwise it is aborted.
func (c *Capturer) store(ctx context.Context, cfg *config, m meta, src chunkSource) (res *Result, err error) {
	if cl, ok := src.(interface{ close() }); ok {
		defer cl.close()
	}
	first, err := src.next(ctx)
	if err == goio.EOF {
		return nil, fmt.Errorf("%w: the source is empty (0 bytes)", ErrNoMedia)
	}
	if err != nil {
		return nil, err
	}
	mt := sniff(first, m.declared)
	if m.name == "" {
		m.name = madeName(m.hint, time.Now())
	}
	name := finalName(m.name, mt)
	asset, err := cfg.sink.Create(ctx, Meta{Name: name, MIME: mt, Size: m.size, Source: shortURL(m.source), Rung: m.rung})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			asset.Abort()
		}
	}()
	h := sha256.New()
	var n int64
	for b := first; ; {
		h.Write(b)
		if _, err := asset.Write(b); err != nil {
			return nil, fmt.Errorf("writing the capture: %w", err)
		}
		n += int64(len(b))
		if cfg.progress != nil {
			cfg.progress(Progress{Rung: m.rung, Done: n, Total: m.size})
		}
		b, err = src.next(ctx)
		if err == goio.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if m.size >= 0 && n != m.size {
		return nil, fmt.Errorf("got %d bytes where %d were announced", n, m.size)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res = &Result{
		Name: name, MIME: mt, Size: n, SHA256: hex.EncodeToString(h.Sum(nil)),
		Source: shortURL(m.source), Rung: m.rung, Width: m.width, Height: m.height,
	}
	loc, err := asset.Commit(res)
	if err != nil {
		return nil, err
	}
	res.Location = loc
	return res, nil
}
