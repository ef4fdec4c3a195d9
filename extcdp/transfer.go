package extcdp

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/target"

	"github.com/livetab/livetab/internal/connlimit"
	"github.com/livetab/livetab/livetabcdp"
)

// The transfer channel (livetabcdp's Livetab.*Transfer methods) moves a
// file's bytes between a client and a page past CDP: the relay keeps them
// in a temporary file (unlinked for a transfer to the page; for one from
// the page, named in a directory of this user alone until it ends, so that
// its owner may read it by path: Livetab.transferFile) and serves them on
// 127.0.0.1 to the extension's sandboxed transfer page, which the client's
// in-page script frames into the tab and which hands the page a Blob by
// postMessage.
// Hostile pages can frame that page too, with any URL, so everything rests
// on the token in the URL: 32 random bytes, one request each, within
// transferTTL, and only for a request whose Origin is the opaque one of a
// sandboxed page ("null"; a web page's own fetch carries its origin).

// transferPath is the path of every transfer URL, before the token.
const transferPath = "/livetab/transfer/"

var (
	// transferTTL is how long a transfer's one request may be waited
	// for after its last write (or its opening, for one from the page).
	transferTTL = 2 * time.Minute
	// maxTransfers bounds a client's open transfers.
	maxTransfers = 8
	// maxAhead bounds the writes of a transfer that arrived before the
	// bytes in front of them.
	maxAhead = 16
	// maxReads bounds the reads of one transfer waiting or in progress.
	maxReads = 4
	// readsAtOnce bounds the reads of every client that hold a buffer at
	// once (until their answer is queued, where the client's own bound of
	// what it leaves unread holds it); the others wait their turn. One
	// client's reads took 500-840 MiB of heap when each of its transfers
	// had a bound of its own only (red team). A bound per client refused
	// two captures on one connection.
	readsAtOnce = 4
	// maxTransferRead bounds one Livetab.readTransfer.
	maxTransferRead int64 = 2 << 20
	// maxTransferBytes bounds the bytes of the relay's open transfers
	// together, and diskReserve is what they leave free on the disk of
	// their temporary files: a program with the endpoint's token must not
	// fill the person's disk (TestRedTeamTransferFillsNoDisk).
	maxTransferBytes int64 = 64 << 30
	diskReserve      int64 = 1 << 30
)

type transfers struct {
	mu   sync.Mutex
	srv  *http.Server
	base string // http://127.0.0.1:port + transferPath, once listening
	dir  string // the private directory of the files of transfers from the page, once made
	byID map[string]*transfer
	done bool // the relay closed
	// buffers holds a token for each read that holds its buffer (at most
	// readsAtOnce), made once.
	buffers     chan struct{}
	buffersOnce sync.Once
}

// buffer waits for a read's turn to hold a buffer; false when ctx ended
// first. Give the turn back with unbuffer.
func (ts *transfers) buffer(ctx context.Context) bool {
	ts.buffersOnce.Do(func() { ts.buffers = make(chan struct{}, readsAtOnce) })
	select {
	case ts.buffers <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (ts *transfers) unbuffer() { <-ts.buffers }

type transfer struct {
	id     string
	owner  *Client
	toPage bool
	size   int64
	f      *os.File
	path   string // the file's name while it still has one
	named  bool   // the file keeps its name until the transfer ends (a transfer from the page)
	// Under transfers.mu:
	written int64           // the bytes from 0 on that have arrived
	ahead   map[int64]int64 // writes past written: offset -> end
	reads   int             // reads waiting or in progress
	claimed bool            // its one request came
	closed  bool
	// cut says why the bytes can no longer come: the page's one post
	// ended short, or was refused. Reads waiting for them fail at once
	// rather than wait out transferTTL (TestRedTeamCutPostFailsReads).
	cut     error
	expires time.Time
	more    chan struct{} // closed and replaced when written grows or the transfer closes
}

func (x *transfer) wake() {
	close(x.more)
	x.more = make(chan struct{})
}

// listen starts the loopback server once. Call with ts.mu held.
func (ts *transfers) listen(r *Relay) error {
	if ts.srv != nil {
		return nil
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("livetab: the transfer channel cannot listen on 127.0.0.1: %w", err)
	}
	// Any local program may connect: headers are small and come at once,
	// and an idle connection goes.
	ts.srv = &http.Server{Handler: http.HandlerFunc(r.serveTransfer)}
	connlimit.Bound(ts.srv, connlimit.MaxConns)
	ts.srv.MaxHeaderBytes = 16 << 10
	ts.base = "http://" + ln.Addr().String() + transferPath
	go ts.srv.Serve(ln)
	return nil
}

// transferBase starts the transfer channel's server if need be and
// returns its base URL, or "" when it cannot listen.
func (r *Relay) transferBase() string {
	ts := &r.transfers
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.done || ts.listen(r) != nil {
		return ""
	}
	return ts.base
}

func newTransferID() string {
	var b [32]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// transferCommand answers the Transfer methods; false when m is not one.
func (c *Client) transferCommand(m *cdproto.Message, sid target.SessionID) bool {
	switch m.Method {
	case livetabcdp.CommandOpenTransfer:
		var p livetabcdp.OpenTransferParams
		if !c.params(m, sid, &p) {
			return true
		}
		res, err := c.openTransfer(p)
		if err != nil {
			c.failErr(m.ID, sid, err)
			return true
		}
		c.reply(m.ID, sid, res)
	case livetabcdp.CommandWriteTransfer:
		var p livetabcdp.WriteTransferParams
		if !c.params(m, sid, &p) {
			return true
		}
		if err := c.writeTransfer(p); err != nil {
			c.failErr(m.ID, sid, err)
			return true
		}
		c.reply(m.ID, sid, nil)
	case livetabcdp.CommandReadTransfer:
		var p livetabcdp.ReadTransferParams
		if !c.params(m, sid, &p) {
			return true
		}
		c.readTransfer(m, sid, p)
	case livetabcdp.CommandTransferFile:
		var p livetabcdp.TransferFileParams
		if !c.params(m, sid, &p) {
			return true
		}
		c.transferFile(m, sid, p)
	case livetabcdp.CommandCloseTransfer:
		var p livetabcdp.CloseTransferParams
		if !c.params(m, sid, &p) {
			return true
		}
		c.r.closeTransfer(c, p.Transfer)
		c.reply(m.ID, sid, nil)
	default:
		return false
	}
	return true
}

var errNoTransfer = errors.New("livetab: no such transfer of this connection: it was closed, or never opened here; open one with Livetab.openTransfer")

func (c *Client) openTransfer(p livetabcdp.OpenTransferParams) (*livetabcdp.OpenTransferResult, error) {
	if p.Direction != livetabcdp.TransferToPage && p.Direction != livetabcdp.TransferFromPage {
		return nil, fmt.Errorf("livetab: a transfer's direction is %q or %q, not %q", livetabcdp.TransferToPage, livetabcdp.TransferFromPage, p.Direction)
	}
	if p.Size < 0 {
		return nil, errors.New("livetab: a transfer needs the file's size; stream a file of unknown size through the page instead")
	}
	ext := c.r.b.Hello().ExtensionID
	if ext == "" {
		return nil, errors.New("livetab: the extension has not said its id yet; try again once it is connected")
	}
	ts := &c.r.transfers
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.done {
		return nil, ErrRelayClosed
	}
	ts.sweep()
	n := 0
	for _, x := range ts.byID {
		if x.owner == c {
			n++
		}
	}
	if n >= maxTransfers {
		return nil, fmt.Errorf("livetab: this connection has %d transfers open; close one (Livetab.closeTransfer) first", n)
	}
	var open, mine int64
	for _, x := range ts.byID {
		open += x.size
		if x.owner == c {
			mine += x.size
		}
	}
	if p.Size > maxTransferBytes-open {
		return nil, fmt.Errorf("livetab: a transfer of %d bytes does not fit: the open transfers hold %d of the %d bytes livetab keeps on disk at once; send a smaller file or wait for the others", p.Size, open, maxTransferBytes)
	}
	free := diskFree(os.TempDir())
	if free >= 0 && p.Size > free-diskReserve-open {
		return nil, fmt.Errorf("livetab: a transfer of %d bytes would leave the disk of %s nearly full (%d bytes free, %d held for open transfers); free some space or send a smaller file", p.Size, os.TempDir(), free, open)
	}
	// One connection holds at most half of the room the others leave: it
	// cannot leave them none (red team: one declared size refused every
	// other client's transfers; two connections of one program each took
	// half of the whole).
	room := maxTransferBytes
	if free >= 0 {
		room = min(room, free-diskReserve)
	}
	share := (room - (open - mine)) / 2
	if mine+p.Size > share {
		return nil, fmt.Errorf("livetab: a transfer of %d bytes does not fit: this connection's transfers hold %d bytes, and one connection holds at most half of the room the others leave (%d bytes); close one (Livetab.closeTransfer) or send a smaller file", p.Size, mine, share)
	}
	if err := ts.listen(c.r); err != nil {
		return nil, err
	}
	id := newTransferID()
	if p.Direction == livetabcdp.TransferToPage {
		f, err := os.CreateTemp("", "livetab-transfer-")
		if err != nil {
			return nil, fmt.Errorf("livetab: a temporary file for the transfer: %w", err)
		}
		// Unlinked at once: the bytes live as long as the descriptor, and
		// no crash or cancel leaves a file behind. (Where a file cannot be
		// removed while open, it is removed at close.)
		path := ""
		if os.Remove(f.Name()) != nil {
			path = f.Name()
		}
		x := &transfer{id: id, owner: c, toPage: true, size: p.Size, f: f, path: path,
			expires: time.Now().Add(transferTTL), more: make(chan struct{})}
		return ts.add(x, ext), nil
	}
	// A transfer from the page keeps a name, in a directory only this
	// user may open, for Livetab.transferFile: a program on this machine
	// reads the file itself rather than every byte as base64. The name
	// comes from the token, never from the page or a client.
	dir, err := ts.privateDir()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, livetabcdp.TransferFileName(id))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("livetab: a file for the transfer in %s: %w", dir, err)
	}
	x := &transfer{id: id, owner: c, size: p.Size, f: f, path: path, named: true,
		expires: time.Now().Add(transferTTL), more: make(chan struct{})}
	return ts.add(x, ext), nil
}

// add registers x and answers its opening. Call with ts.mu held.
func (ts *transfers) add(x *transfer, ext string) *livetabcdp.OpenTransferResult {
	if ts.byID == nil {
		ts.byID = map[string]*transfer{}
	}
	ts.byID[x.id] = x
	return &livetabcdp.OpenTransferResult{
		Transfer: x.id,
		FrameURL: "chrome-extension://" + ext + "/transfer.html#" + ts.base + x.id,
		Expires:  transferTTL.Milliseconds(),
	}
}

// privateDir makes, once, the directory of the files of transfers from the
// page: mode 0700, so that no other user of the machine may list or open
// them; named with the relay's process id, so that the next relay can tell
// it from the directory of a relay that is gone (sweepStaleTransfers).
// Call with ts.mu held.
func (ts *transfers) privateDir() (string, error) {
	if ts.dir != "" {
		// A cleaner of the temporary directory (systemd-tmpfiles, or a
		// relay in another pid namespace taking this one for gone) may
		// have removed it: then a new one.
		if fi, err := os.Lstat(ts.dir); err == nil && fi.IsDir() {
			return ts.dir, nil
		}
	}
	sweepStaleTransfers(os.TempDir())
	d, err := os.MkdirTemp("", transferDirPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", fmt.Errorf("livetab: a private directory for transfers: %w", err)
	}
	if err := os.Chmod(d, 0o700); err != nil {
		os.Remove(d)
		return "", fmt.Errorf("livetab: a private directory for transfers: %w", err)
	}
	ts.dir = d
	return d, nil
}

// mine returns c's open transfer id. Call with ts.mu held.
func (ts *transfers) mine(c *Client, id string) (*transfer, error) {
	x := ts.byID[id]
	if x == nil || x.owner != c || x.closed {
		return nil, errNoTransfer
	}
	return x, nil
}

func (c *Client) writeTransfer(p livetabcdp.WriteTransferParams) error {
	ts := &c.r.transfers
	ts.mu.Lock()
	x, err := ts.mine(c, p.Transfer)
	if err != nil {
		ts.mu.Unlock()
		return err
	}
	if !x.toPage {
		ts.mu.Unlock()
		return errors.New("livetab: the transfer is from the page; read it (Livetab.readTransfer)")
	}
	end := p.Offset + int64(len(p.Data))
	if p.Offset < x.written || end > x.size {
		ts.mu.Unlock()
		return fmt.Errorf("livetab: bytes %d to %d are outside what the transfer still needs (%d to %d)", p.Offset, end, x.written, x.size)
	}
	for o, e := range x.ahead {
		if p.Offset < e && o < end {
			ts.mu.Unlock()
			return fmt.Errorf("livetab: bytes %d to %d were written already", max(o, p.Offset), min(e, end))
		}
	}
	if p.Offset > x.written && len(x.ahead) >= maxAhead {
		ts.mu.Unlock()
		return fmt.Errorf("livetab: %d writes are waiting for the bytes before them; send those first", len(x.ahead))
	}
	f := x.f
	ts.mu.Unlock()
	// The lane runs one client's commands one at a time, so no other
	// write of this transfer runs here meanwhile; a close may, and then
	// the write fails on the closed file.
	if _, err := f.WriteAt(p.Data, p.Offset); err != nil {
		return fmt.Errorf("livetab: writing the transfer: %w", err)
	}
	ts.mu.Lock()
	if !x.closed {
		if x.ahead == nil {
			x.ahead = map[int64]int64{}
		}
		x.ahead[p.Offset] = end
		for e, ok := x.ahead[x.written]; ok; e, ok = x.ahead[x.written] {
			delete(x.ahead, x.written)
			x.written = e
		}
		x.expires = time.Now().Add(transferTTL)
		x.wake()
	}
	ts.mu.Unlock()
	return nil
}

// readTransfer answers a read of the bytes the page posts to a transfer
// from the page, once they have arrived: a read may be sent while the page
// still posts, and is answered off the client's lane, so that its other
// commands (the close of the transfer among them) go on meanwhile.
func (c *Client) readTransfer(m *cdproto.Message, sid target.SessionID, p livetabcdp.ReadTransferParams) {
	ts := &c.r.transfers
	x, err := ts.startRead(c, p.Transfer, p.Offset, func(x *transfer) error {
		if x.toPage {
			return errors.New("livetab: the transfer is to the page; write it (Livetab.writeTransfer)")
		}
		return nil
	})
	if err != nil {
		c.failErr(m.ID, sid, err)
		return
	}
	n := min(max(p.Size, 1), maxTransferRead, x.size-p.Offset)
	// The read stops counting before its answer goes: a program that
	// sends its next read on the answer must find the slot free.
	release := func() {
		ts.mu.Lock()
		x.reads--
		ts.mu.Unlock()
	}
	go func() {
		if _, err := ts.await(c.ctx, x, c.r.b.Connected, func(have int64) bool { return have >= p.Offset+n }); err != nil {
			release()
			c.failErr(m.ID, sid, err)
			return
		}
		if !ts.buffer(c.ctx) {
			release()
			return // the client is gone
		}
		defer ts.unbuffer()
		buf := make([]byte, n)
		if _, err := x.f.ReadAt(buf, p.Offset); err != nil && !errors.Is(err, io.EOF) {
			release()
			c.failErr(m.ID, sid, fmt.Errorf("livetab: reading the transfer: %w", err))
			return
		}
		release()
		c.reply(m.ID, sid, &livetabcdp.ReadTransferResult{Data: buf, EOF: p.Offset+n == x.size, Total: x.size})
	}()
}

// startRead finds c's transfer id for a read from offset that kind
// allows, and counts the read in flight; the reader gives it back.
func (ts *transfers) startRead(c *Client, id string, offset int64, kind func(*transfer) error) (*transfer, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	x, err := ts.mine(c, id)
	if err != nil {
		return nil, err
	}
	if err := kind(x); err != nil {
		return nil, err
	}
	if offset < 0 || offset > x.size {
		return nil, fmt.Errorf("livetab: offset %d is outside the transfer's %d bytes", offset, x.size)
	}
	if x.reads >= maxReads {
		return nil, fmt.Errorf("livetab: %d reads of the transfer are in flight; wait for their answers", x.reads)
	}
	x.reads++
	return x, nil
}

// transferFile answers the path of the file of c's transfer from the page
// and how many of its bytes arrived, once more than p.Offset have (or all):
// off the client's lane, as readTransfer. Only the owner learns the path.
func (c *Client) transferFile(m *cdproto.Message, sid target.SessionID, p livetabcdp.TransferFileParams) {
	ts := &c.r.transfers
	x, err := ts.startRead(c, p.Transfer, p.Offset, func(x *transfer) error {
		if x.toPage || !x.named {
			return errors.New("livetab: only a transfer from the page has a file to read; write this one (Livetab.writeTransfer)")
		}
		return nil
	})
	if err != nil {
		c.failErr(m.ID, sid, err)
		return
	}
	go func() {
		have, err := ts.await(c.ctx, x, c.r.b.Connected, func(have int64) bool { return have > p.Offset || have == x.size })
		ts.mu.Lock()
		x.reads--
		ts.mu.Unlock()
		if err != nil {
			c.failErr(m.ID, sid, err)
			return
		}
		c.reply(m.ID, sid, &livetabcdp.TransferFileResult{Path: x.path, Written: have, Total: x.size})
	}()
}

// errNoMoreBytes: a read waited transferTTL for the page's post.
var errNoMoreBytes = errors.New("livetab: the page posted no more bytes in time: its post stopped or never started (was the transfer frame removed?); close the transfer and capture again")

// transferAwayWait is how long the extension may be away while a read
// waits for a post that has not begun: the transfer frame is framed and
// posts in a tab of that browser, and once the extension stays away as
// long as the bridge waits for it (Chrome ended, or the extension with it),
// no post is coming. A post under way goes on without the extension.
var transferAwayWait = 10 * time.Second

// await waits until the bytes of x that ready asks for arrived, x closed,
// its post ended short, or transferTTL passed, and says how many arrived;
// the read that waits stays counted in x.reads. connected says whether
// the extension is connected now.
func (ts *transfers) await(ctx context.Context, x *transfer, connected func() bool, ready func(have int64) bool) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, transferTTL)
	defer cancel()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var away time.Time
	for {
		ts.mu.Lock()
		closed, have, more, claimed, cut := x.closed, x.written, x.more, x.claimed, x.cut
		ts.mu.Unlock()
		if closed {
			return 0, errNoTransfer
		}
		if ready(have) {
			return have, nil
		}
		if cut != nil {
			return 0, cut
		}
		select {
		case <-more:
		case <-tick.C:
			switch {
			case claimed || connected():
				away = time.Time{}
			case away.IsZero():
				away = time.Now()
			case time.Since(away) >= transferAwayWait:
				return 0, fmt.Errorf("livetab: the page's post of the transfer never began, and the livetab extension has been away for %v (Chrome closed, or the extension stopped): close the transfer and capture again once the popup shows it connected", transferAwayWait)
			}
		case <-ctx.Done():
			return 0, errNoMoreBytes
		}
	}
}

// closeTransfer ends c's transfer id, if c has it.
func (r *Relay) closeTransfer(c *Client, id string) {
	ts := &r.transfers
	ts.mu.Lock()
	x := ts.byID[id]
	if x == nil || x.owner != c {
		ts.mu.Unlock()
		return
	}
	ts.end(x)
	ts.mu.Unlock()
}

// sweep ends the transfers whose token expired unclaimed: no request
// reaches them any more (a transfer to the page lives transferTTL past its
// last write), and their declared sizes would hold room from every client
// until their owner closed them. Call with ts.mu held.
func (ts *transfers) sweep() {
	now := time.Now()
	for _, x := range ts.byID {
		if !x.claimed && x.reads == 0 && now.After(x.expires) {
			ts.end(x)
		}
	}
}

// end closes x and forgets it. Call with ts.mu held.
func (ts *transfers) end(x *transfer) {
	delete(ts.byID, x.id)
	if x.closed {
		return
	}
	x.closed = true
	x.wake()
	x.f.Close()
	if x.path != "" {
		os.Remove(x.path)
	}
}

// closeTransfers ends the transfers of c (nil: every one, and the server).
func (r *Relay) closeTransfers(c *Client) {
	ts := &r.transfers
	ts.mu.Lock()
	for _, x := range ts.byID {
		if c == nil || x.owner == c {
			ts.end(x)
		}
	}
	var srv *http.Server
	if c == nil {
		ts.done = true
		srv, ts.srv = ts.srv, nil
		if ts.dir != "" {
			os.RemoveAll(ts.dir)
			ts.dir = ""
		}
	}
	ts.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
}

// claim returns the transfer of the request's token once, to the transfer
// page of the extension only; nil when the request gets nothing.
func (ts *transfers) claim(req *http.Request, toPage bool) *transfer {
	id, ok := strings.CutPrefix(req.URL.Path, transferPath)
	if !ok {
		return nil
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	x := ts.byID[id]
	if x == nil || x.closed || x.claimed || x.toPage != toPage || time.Now().After(x.expires) {
		return nil
	}
	x.claimed = true
	return x
}

// serveTransfer is the loopback server: a GET of a transfer to the page, a
// POST of one from it, and the CORS preflight of either.
func (r *Relay) serveTransfer(w http.ResponseWriter, req *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	// The transfer page is sandboxed: its origin is opaque, "null". A web
	// page (or any other origin) that learned a token gets nothing.
	if req.Header.Get("Origin") != "null" {
		http.Error(w, "livetab: not for this origin", http.StatusForbidden)
		return
	}
	h.Set("Access-Control-Allow-Origin", "null")
	switch req.Method {
	case http.MethodOptions:
		h.Set("Access-Control-Allow-Methods", "GET, POST")
		h.Set("Access-Control-Allow-Private-Network", "true")
		w.WriteHeader(http.StatusNoContent)
	case http.MethodGet:
		r.serveToPage(w, req)
	case http.MethodPost:
		r.takeFromPage(w, req)
	default:
		http.Error(w, "livetab: GET or POST", http.StatusMethodNotAllowed)
	}
}

func (r *Relay) serveToPage(w http.ResponseWriter, req *http.Request) {
	ts := &r.transfers
	x := ts.claim(req, true)
	if x == nil {
		http.NotFound(w, req)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", fmt.Sprint(x.size))
	buf := make([]byte, 256<<10)
	var off int64
	for off < x.size {
		ts.mu.Lock()
		written, closed, more := x.written, x.closed, x.more
		ts.mu.Unlock()
		if closed {
			// Cut short: with fewer bytes than its Content-Length the
			// response fails in the page, which keeps nothing.
			panic(http.ErrAbortHandler)
		}
		if off == written {
			select {
			case <-more:
			case <-req.Context().Done():
				return
			}
			continue
		}
		n, err := x.f.ReadAt(buf[:min(int64(len(buf)), written-off)], off)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			off += int64(n)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			panic(http.ErrAbortHandler)
		}
	}
}

func (r *Relay) takeFromPage(w http.ResponseWriter, req *http.Request) {
	ts := &r.transfers
	x := ts.claim(req, false)
	if x == nil {
		http.NotFound(w, req)
		return
	}
	if req.ContentLength != x.size {
		posted := "a post of unknown length"
		if req.ContentLength >= 0 {
			posted = fmt.Sprintf("%d bytes", req.ContentLength)
		}
		ts.cut(x, fmt.Errorf("livetab: the page posted %s to a transfer of %d bytes, so none were taken: close the transfer and capture again", posted, x.size))
		http.Error(w, "livetab: not the announced size", http.StatusRequestEntityTooLarge)
		return
	}
	// The bytes count as written as they arrive, so that the program's
	// reads go on while the page still posts.
	buf := make([]byte, 1<<20)
	body := io.LimitReader(req.Body, x.size)
	var off int64
	for off < x.size {
		k, err := io.ReadFull(body, buf[:min(int64(len(buf)), x.size-off)])
		if k > 0 {
			if _, werr := x.f.WriteAt(buf[:k], off); werr != nil {
				// Not counted as written: a reader would get zeros.
				ts.cut(x, fmt.Errorf("livetab: writing the transfer's file after %d bytes: %w: free some disk space, then close the transfer and capture again", off, werr))
				http.Error(w, "livetab: the transfer's file could not be written", http.StatusInsufficientStorage)
				return
			}
			off += int64(k)
			ts.mu.Lock()
			if !x.closed {
				x.written = off
				x.wake()
			}
			ts.mu.Unlock()
		}
		if err != nil {
			break
		}
	}
	if off != x.size {
		ts.cut(x, fmt.Errorf("livetab: the page's post of the transfer ended after %d of its %d bytes (the tab or its transfer frame closed, or Chrome went away): close the transfer and capture again", off, x.size))
		http.Error(w, "livetab: the post ended short", http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// cut tells the reads of x that its bytes can no longer come: its one post
// is over.
func (ts *transfers) cut(x *transfer, why error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if !x.closed && x.cut == nil {
		x.cut = why
		x.wake()
	}
}
