package capture

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
)

// maxTracked bounds the responses a watcher remembers, so a long session on
// a busy page does not grow without end; the oldest are forgotten first.
const maxTracked = 4096

// response is what the watcher knows of one request of the tab.
type response struct {
	id          network.RequestID
	url         string
	status      int64
	mime        string
	typ         network.ResourceType
	length      int64 // Content-Length; -1 when absent or encoded
	encoded     bool
	disposition string
	received    int64 // decoded bytes, from dataReceived
	finished    bool
	failed      bool
	seq         int64 // order of completion
}

// size is the best estimate of the decoded body size, -1 if unknown.
func (r *response) size() int64 {
	if r.length >= 0 {
		return r.length
	}
	if r.finished {
		return r.received
	}
	return -1
}

// watcher follows the tab's network events, so that captures know which
// request holds which URL (rung 1) and WaitNew sees new responses.
type watcher struct {
	mu     sync.Mutex
	byID   map[network.RequestID]*response
	order  []network.RequestID
	seq    int64
	notify chan struct{} // closed and replaced when a response finishes
	docs   int           // main-frame navigations seen: which document the tab shows
}

// doc numbers the document the tab shows.
func (w *watcher) doc() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.docs
}

func newWatcher() *watcher {
	return &watcher{byID: map[network.RequestID]*response{}, notify: make(chan struct{})}
}

// event runs on chromedp's reading goroutine: it must be quick and send no
// command.
func (w *watcher) event(ev any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch ev := ev.(type) {
	case *page.EventFrameNavigated:
		if ev.Frame != nil && ev.Frame.ParentID == "" {
			w.docs++
		}
	case *network.EventResponseReceived:
		if ev.Response == nil {
			return
		}
		r := w.byID[ev.RequestID]
		if r == nil {
			r = &response{id: ev.RequestID}
			w.byID[ev.RequestID] = r
			w.order = append(w.order, ev.RequestID)
			if len(w.order) > maxTracked {
				delete(w.byID, w.order[0])
				w.order = w.order[1:]
			}
		}
		resp := ev.Response
		r.url = resp.URL
		r.status = resp.Status
		r.mime = resp.MimeType
		r.typ = ev.Type
		r.length = -1
		enc := header(resp.Headers, "content-encoding")
		r.encoded = enc != "" && enc != "identity"
		if n, err := strconv.ParseInt(header(resp.Headers, "content-length"), 10, 64); err == nil && !r.encoded {
			r.length = n
		}
		r.disposition = header(resp.Headers, "content-disposition")
	case *network.EventDataReceived:
		if r := w.byID[ev.RequestID]; r != nil {
			r.received += ev.DataLength
		}
	case *network.EventLoadingFinished:
		if r := w.byID[ev.RequestID]; r != nil {
			r.finished = true
			w.seq++
			r.seq = w.seq
			close(w.notify)
			w.notify = make(chan struct{})
		}
	case *network.EventLoadingFailed:
		if r := w.byID[ev.RequestID]; r != nil {
			r.failed = true
		}
	}
}

func header(h network.Headers, name string) string {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			if s, ok := v.(string); ok {
				return s
			}
			return fmt.Sprint(v)
		}
	}
	return ""
}

// lookup returns copies of up to n complete, whole (status 200), non-empty
// responses for url, newest first.
func (w *watcher) lookup(url string, n int) []response {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []response
	for i := len(w.order) - 1; i >= 0 && len(out) < n; i-- {
		r := w.byID[w.order[i]]
		if r != nil && r.url == url && r.finished && !r.failed && r.status == 200 && r.size() != 0 {
			out = append(out, *r)
		}
	}
	return out
}

// since returns copies of the responses finished after seq, oldest first,
// the current sequence number, and a channel closed at the next finish.
func (w *watcher) since(seq int64) ([]response, int64, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []response
	for _, id := range w.order {
		if r := w.byID[id]; r != nil && r.finished && r.seq > seq {
			out = append(out, *r)
		}
	}
	return out, w.seq, w.notify
}

func (w *watcher) current() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seq
}

// body is rung 1: the response body Chrome still holds, in one message.
func (c *Capturer) body(ctx context.Context, r *response, cfg *config, d desc) (*Result, error) {
	if n := r.size(); n < 0 || n > cfg.bodyLimit {
		return nil, fmt.Errorf("the body (%d bytes) is not known to fit the %d-byte limit of one message", n, cfg.bodyLimit)
	}
	res, err := cdp.Call(ctx, c.t, network.GetResponseBody, network.GetResponseBodyParams{RequestID: r.id})
	if err != nil {
		return nil, c.tabErr(fmt.Errorf("Network.getResponseBody: %w", err))
	}
	data := res.Body
	if len(data) == 0 {
		return nil, fmt.Errorf("no body for request %s: Chrome kept none", r.id)
	}
	m := meta{
		name: nameFrom(cfg.name, dispositionName(r.disposition), r.url), declared: r.mime, source: r.url,
		size: r.size(), rung: RungBody, width: d.Width, height: d.Height,
	}
	return c.store(ctx, cfg, m, &sliceSource{data: data, chunk: cfg.chunk})
}
