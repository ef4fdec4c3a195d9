// Package capture gets media out of a page as bytes: the image, video or
// audio behind an element, a URL the page can see, a network response, or a
// file the page only offers as a download. It works on any chromedp tab
// context: a tab of chromedp's ExecAllocator, or a livetab tab in a person's
// own Chrome.
//
// Each capture climbs a ladder, cheapest first, and records the rung it used:
//
//  1. [RungBody]: the response body Chrome already holds for a request the
//     Capturer saw (Network.getResponseBody), up to a size limit, because
//     Chrome returns a body in one message.
//  2. [RungPage]: read inside the page: fetch the source with the page's
//     credentials (this works for blob: URLs the page made), or
//     canvas.toBlob, into a Blob that Go then pulls in slices of at most
//     1 MiB.
//     Media of at least [DefaultSaveAbove] bytes is first saved by the
//     browser instead ([RungSave]): the page's own blob: URL, or an
//     http(s) URL of the page's origin, is downloaded as is (through
//     livetab by the extension, Livetab.downloadBlob), any other source
//     read into a blob and downloaded through an object URL; Chrome writes
//     it to disk at disk speed and Go reads the file, as in rung 3. When
//     no download starts, through livetab the extension's transfer page
//     posts the blob to the relay past CDP ([RungChannel]), and otherwise
//     the slices are read as above.
//  3. [RungDownload]: media that only comes as a download (a "Download"
//     button, Content-Disposition: attachment, a download the page's
//     script starts) goes through the browser's download machinery
//     (Browser.setDownloadBehavior and Browser.download* events, which
//     livetab's relay answers from chrome.downloads) and is streamed from
//     the downloaded file.
//
// Bytes are streamed into a [Sink] (files by default) with their SHA-256
// computed on the way; nothing holds a whole large asset in memory, and a
// failed or cancelled capture leaves no partial file that looks complete.
//
// Elements are named by a [Ref]: a CSS selector, a backend node id, a
// Runtime object id or a JavaScript expression, so that callers holding an
// element in any of these forms (such as a snapshot index of package page,
// which marks its elements with a data-livetab-ref attribute) can point at
// it.
//
// Through livetab, the downloaded file of rung 3 is the one the browser put
// in the user's Downloads folder; it stays there, as a download the user
// made would. On plain Chrome it goes to a temporary directory and is
// removed once captured.
package capture

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/internal/inpage"
)

// Rung is a step of the capture ladder.
type Rung int

// The rungs of the ladder, cheapest first.
const (
	// RungBody reads the response body Chrome already holds.
	RungBody Rung = 1
	// RungPage reads the bytes inside the page: fetch or canvas.toBlob.
	RungPage Rung = 2
	// RungDownload takes the file the browser downloaded.
	RungDownload Rung = 3
	// RungSave has the browser download the media (its blob: URL, an
	// http(s) URL of the page's origin, or a blob rung 2 read), and takes
	// the file: big media moves at disk speed instead of as base64
	// through CDP. It runs between rungs 1 and 2.
	RungSave Rung = 4
	// RungChannel, through livetab, has the extension's transfer page,
	// framed into the tab, post the media's blob to livetab over loopback,
	// and reads it from there: no byte becomes a CDP string, no click, and
	// no download shows in the person's list. It runs after RungSave (the
	// browser's download was faster where both ran) and before the
	// in-page slices; plain Chrome has no such page.
	RungChannel Rung = 5
)

// String names the rung as results and errors show it.
func (r Rung) String() string {
	switch r {
	case RungBody:
		return "response-body"
	case RungPage:
		return "in-page"
	case RungDownload:
		return "download"
	case RungSave:
		return "page-download"
	case RungChannel:
		return "channel"
	}
	return fmt.Sprintf("rung(%d)", int(r))
}

// Errors a capture can end with; they are wrapped with details, so test
// them with errors.Is.
var (
	// ErrNotFound: no element matches the reference.
	ErrNotFound = errors.New("capture: element not found")
	// ErrNoMedia: the element shows no image, video, audio or canvas and
	// offers no download.
	ErrNoMedia = errors.New("capture: the element has no media")
	// ErrCrossOrigin: the media is on another origin whose server allows
	// the page no read (no CORS), or a canvas is tainted by such media.
	ErrCrossOrigin = errors.New("capture: the page may not read this cross-origin media")
	// ErrGone: the source no longer exists (a revoked blob: URL, a
	// MediaSource or MediaStream with no file behind it).
	ErrGone = errors.New("capture: the media is gone")
	// ErrDownloadFailed: the browser canceled, blocked or lost a download.
	ErrDownloadFailed = errors.New("capture: the download failed")
	// ErrTabClosed: the tab closed or navigated away during the capture.
	ErrTabClosed = errors.New("capture: the tab closed during the capture")
	// ErrHTTP: the server answered the page's read with an error status.
	ErrHTTP = errors.New("capture: the server refused the read")
)

// Result describes one captured asset.
type Result struct {
	// Name is a file name for the asset: from Content-Disposition, the
	// download's suggested name or the URL's path; for media with no name
	// (a blob:, a canvas) the element's alt, title or label, else the
	// page's title, and the time, e.g. "result-20261123-192233.png".
	Name string
	// MIME is the media type, sniffed from the bytes and reconciled with
	// what the server or the element declared.
	MIME string
	// Size is the number of bytes captured.
	Size int64
	// SHA256 is the lowercase hex SHA-256 of the bytes.
	SHA256 string
	// Source is the URL the bytes came from ("" for a canvas); long data:
	// URLs are shortened.
	Source string
	// Rung is the rung of the ladder that produced the bytes.
	Rung Rung
	// Attempts lists the cheaper rungs that were tried and why they failed.
	Attempts []Attempt
	// Width and Height are the element's intrinsic size, when known.
	Width, Height int
	// Location is where the sink put the asset (a file path for [Dir]).
	Location string
}

// Attempt is a rung that was tried and failed before the one that worked.
type Attempt struct {
	Rung Rung
	Err  error
}

// Progress reports a transfer's advance. Total is -1 when unknown.
type Progress struct {
	Rung  Rung
	Done  int64
	Total int64
}

// Defaults.
const (
	// DefaultBodyLimit is the largest response body read with
	// Network.getResponseBody, which returns it in one message.
	DefaultBodyLimit = 16 << 20
	// MaxChunk is the largest slice of bytes moved per message.
	MaxChunk = 1 << 20
	// DefaultSaveAbove is the smallest blob saved as a download
	// ([RungSave]): below it, the download's fixed cost (a few round
	// trips, a file) outweighs the slower in-page read.
	DefaultSaveAbove = 8 << 20
)

// Option configures a Capturer (in New) or one capture (in its methods).
type Option func(*config)

type config struct {
	sink          Sink
	name          string
	progress      func(Progress)
	rungs         map[Rung]bool
	bodyLimit     int64
	chunk         int
	canvasType    string
	canvasQuality float64
	downloadDir   string
	downloadStart time.Duration
	saveAbove     int64
	// channelAbove is the size from which RungChannel runs once RungSave
	// failed for good (saveAbove is then -1); 0: saveAbove.
	channelAbove int64
	check        check // WaitNew's filter, for URL
}

func defaults() config {
	return config{
		sink:          Dir(filepath.Join(os.TempDir(), "livetab-captures")),
		bodyLimit:     DefaultBodyLimit,
		chunk:         MaxChunk,
		downloadStart: 3 * time.Second,
		saveAbove:     DefaultSaveAbove,
	}
}

// To sends the captured bytes to sink. The default is
// Dir(os.TempDir()/livetab-captures).
func To(sink Sink) Option { return func(c *config) { c.sink = sink } }

// Name sets the asset's name instead of the one found by the capture.
func Name(name string) Option { return func(c *config) { c.name = name } }

// OnProgress calls f after each slice of bytes; f must return quickly.
func OnProgress(f func(Progress)) Option { return func(c *config) { c.progress = f } }

// Rungs restricts the ladder to the given rungs, for example to force the
// in-page read in slices (Rungs(RungPage)), the page's own download of a
// big blob (Rungs(RungSave)) or a download.
func Rungs(r ...Rung) Option {
	return func(c *config) {
		c.rungs = map[Rung]bool{}
		for _, x := range r {
			c.rungs[x] = true
		}
	}
}

// BodyLimit sets the largest body read whole with Network.getResponseBody
// (rung 1); bigger media is read in slices in the page. The default is
// DefaultBodyLimit.
func BodyLimit(n int64) Option { return func(c *config) { c.bodyLimit = n } }

// ChunkSize sets the bytes moved per message, at most MaxChunk.
func ChunkSize(n int) Option {
	return func(c *config) {
		if n > 0 && n <= MaxChunk {
			c.chunk = n
		}
	}
}

// CanvasFormat chooses the encoding of canvas captures (default
// "image/png"); quality in (0, 1] applies to lossy formats.
func CanvasFormat(mime string, quality float64) Option {
	return func(c *config) { c.canvasType, c.canvasQuality = mime, quality }
}

// SaveAbove sets the smallest blob that [RungSave] saves as a download
// (default DefaultSaveAbove); smaller ones are read in slices.
func SaveAbove(n int64) Option { return func(c *config) { c.saveAbove = max(n, 0) } }

// DownloadDir sets the directory the browser downloads into for rung 3 on a
// browser that takes Browser.setDownloadBehavior (plain Chrome). Files are
// removed from it once captured. The default is a fresh temporary
// directory, removed by Close.
func DownloadDir(dir string) Option { return func(c *config) { c.downloadDir = dir } }

// DownloadStartWait bounds how long a download that the tab announced
// (Page.downloadWillBegin) may go without the browser-level events before
// the capture re-reads its URL in the page instead. Default 3 s.
func DownloadStartWait(d time.Duration) Option { return func(c *config) { c.downloadStart = d } }

func (c *config) allowed(r Rung) bool { return c.rungs == nil || c.rungs[r] }

// Capturer captures media from one tab. Create it before the media loads
// when you want rung 1: it learns of responses only from then on. Its
// methods are safe for concurrent use; each takes a context for its own
// cancellation and deadline.
type Capturer struct {
	tabCtx context.Context
	t      *chromedp.Target
	b      *chromedp.Browser
	det    <-chan struct{}
	cfg    config
	stop   context.CancelFunc
	w      *watcher

	mu          sync.Mutex
	dlDir       string
	dlOwned     bool
	dlBehaviour bool
	claimed     map[string]bool // download guids taken by running Download calls
	// limiter is how RungSave has this browser download (saveByPage...),
	// and savedDoc the document whose one page-started download it spent
	// (-1 none).
	limiter  int8
	savedDoc int
	groupSeq int

	kit *inpage.Kit // how the in-page library loads and its errors read
}

// New makes a Capturer over the tab of ctx, a context from
// chromedp.NewContext (the tab is opened if it is not yet). It starts
// watching the tab's network responses.
func New(ctx context.Context, opts ...Option) (*Capturer, error) {
	c := &Capturer{tabCtx: ctx, cfg: defaults(), savedDoc: -1}
	c.kit = newKit(c)
	for _, o := range opts {
		o(&c.cfg)
	}
	if err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		c.t = t
		return nil
	})); err != nil {
		return nil, fmt.Errorf("capture: attaching to the tab: %w", err)
	}
	cc := chromedp.FromContext(ctx)
	if cc == nil || cc.Browser == nil {
		return nil, fmt.Errorf("capture: %w: pass a context from chromedp.NewContext", chromedp.ErrInvalidContext)
	}
	c.b = cc.Browser
	det, err := chromedp.Detached(ctx)
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	c.det = det
	lctx, stop := context.WithCancel(ctx)
	c.stop = stop
	c.w = newWatcher()
	if err := chromedp.Listen(lctx, c.w.event); err != nil {
		stop()
		return nil, fmt.Errorf("capture: watching the network: %w", err)
	}
	// chromedp enables Network with Chrome's default buffers; ask for room
	// to keep bodies up to the rung-1 limit.
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{
		MaxResourceBufferSize: new(c.cfg.bodyLimit),
		MaxTotalBufferSize:    new(max(8*c.cfg.bodyLimit, 100<<20)),
	}); err != nil {
		stop()
		return nil, fmt.Errorf("capture: enabling the network domain: %w", err)
	}
	return c, nil
}

// Close stops watching the tab and removes the temporary download
// directory. It leaves the tab open.
func (c *Capturer) Close() error {
	c.stop()
	c.mu.Lock()
	dir, owned, restore := c.dlDir, c.dlOwned, c.dlBehaviour
	c.dlDir, c.dlBehaviour = "", false
	c.mu.Unlock()
	if restore {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c.resetDownloads(ctx)
		cancel()
	}
	if owned && dir != "" {
		return os.RemoveAll(dir)
	}
	return nil
}

func (c *Capturer) opts(opts []Option) *config {
	cfg := c.cfg
	for _, o := range opts {
		o(&cfg)
	}
	return &cfg
}

// run runs one capture with a context that also ends when the tab closes or
// its chromedp context is cancelled: chromedp fails pending commands of a
// detached tab, but a command on a tab whose context was cancelled would
// wait for the caller's deadline.
func (c *Capturer) run(ctx context.Context, f func(ctx context.Context) (*Result, error)) (*Result, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(c.tabCtx, func() {
		cancel(fmt.Errorf("%w: its chromedp context ended", ErrTabClosed))
	})
	defer stop()
	go func() {
		select {
		case <-c.det:
			cancel(fmt.Errorf("%w: the browser detached it", ErrTabClosed))
		case <-ctx.Done():
		}
	}()
	res, err := f(ctx)
	if err != nil {
		if cause := context.Cause(ctx); errors.Is(cause, ErrTabClosed) && !errors.Is(err, ErrTabClosed) {
			err = fmt.Errorf("%w (%w)", cause, err)
		}
		return nil, err
	}
	return res, nil
}

// tabErr explains err when the tab went away under it.
func (c *Capturer) tabErr(err error) error {
	if err == nil || errors.Is(err, ErrTabClosed) {
		return err
	}
	if errors.Is(err, chromedp.ErrTargetDetached) {
		return fmt.Errorf("%w: %w", ErrTabClosed, err)
	}
	select {
	case <-c.det:
		return fmt.Errorf("%w: %w", ErrTabClosed, err)
	case <-time.After(100 * time.Millisecond):
	}
	return err
}
