// Package extcdp runs chromedp in the tabs of the user's own Chrome through
// the livetab extension.
//
// chrome.debugger reaches tabs, never the browser target, so a [Relay]
// answers the browser level itself (targets, sessions, the Browser domain)
// and passes page traffic through the bridge unchanged. [NewAllocator] gives
// chromedp an allocator on it; [Relay.Handler] serves the same relay as a standard
// CDP WebSocket endpoint for other processes (chromedp's remote package,
// Playwright, Puppeteer). A bridge has one relay at a time: NewAllocator
// on a bridge uses the one [NewRelay] opened, or opens one that its
// allocators share and that closes with the last of them; [Relay.Close]
// ends a relay and every client on it.
//
// Cancelling a chromedp context closes the tab only when livetab opened it.
// A tab the user already had (attached with chromedp.WithTargetID) is
// detached and left as it was.
//
// Each connection is a [Client]: each allocated chromedp browser in
// process, each WebSocket of the endpoint. A tab a client opens, and the
// popups that tab opens, belong to it: other clients neither see nor touch
// them. A client's commands run in order per session and never wait on
// another session's; what a client may leave unread and have in flight is
// bounded ([HandlerOptions]).
package extcdp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/livetab/livetab/bridge"
)

// Options configure an allocator.
type Options struct {
	// ConnectTimeout is how long Allocate waits for the extension to
	// connect. Default 30 s.
	ConnectTimeout time.Duration
	// ClientName is how the person sees the program in the extension's
	// popup, where they can stop it. Default: the program's file name.
	ClientName string
}

// Allocator is a chromedp.Allocator that attaches to the user's Chrome
// through the livetab extension. It implements chromedp.Attacher, so each
// chromedp.NewContext on it is a tab of that browser, never a new browser.
type Allocator struct {
	relay *Relay
	opts  Options
	wg    sync.WaitGroup
}

// NewAllocator returns a context whose allocator drives the browser behind
// b. Use it as the parent of chromedp.NewContext.
//
// It uses b's open relay ([NewRelay]); when b has none, it opens one that
// the allocators on b share and that closes when the last of them ends.
func NewAllocator(parent context.Context, b *bridge.Bridge, opts ...Options) (context.Context, context.CancelFunc) {
	r, done := useRelay(b)
	ctx, cancel := r.NewAllocator(parent, opts...)
	a := chromedp.FromContext(ctx).Allocator.(*Allocator)
	context.AfterFunc(ctx, func() {
		a.Wait() // the allocator's tabs close before the relay does
		done()
	})
	return ctx, cancel
}

// NewAllocator returns a context whose allocator drives the browser behind
// r. Use it as the parent of chromedp.NewContext; cancelling it closes the
// tabs its contexts opened, never r.
func (r *Relay) NewAllocator(parent context.Context, opts ...Options) (context.Context, context.CancelFunc) {
	a := &Allocator{relay: r}
	if len(opts) > 0 {
		a.opts = opts[0]
	}
	if a.opts.ConnectTimeout <= 0 {
		a.opts.ConnectTimeout = 30 * time.Second
	}
	if a.opts.ClientName == "" {
		a.opts.ClientName = filepath.Base(os.Args[0]) + " (chromedp)"
	}
	return chromedp.NewAllocatorContext(parent, a)
}

// Allocate satisfies chromedp.Allocator. It waits for the extension, then
// connects a new relay client as the browser's transport.
func (a *Allocator) Allocate(ctx context.Context, opts ...chromedp.BrowserOption) (*chromedp.Browser, error) {
	if chromedp.FromContext(ctx) == nil {
		return nil, chromedp.ErrInvalidContext
	}
	if a.relay.isClosed() {
		return nil, ErrRelayClosed
	}
	wctx, cancel := context.WithTimeout(ctx, a.opts.ConnectTimeout)
	err := a.relay.b.WaitConnected(wctx)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("extcdp: %w", err)
	}
	tctx, tcancel := context.WithCancel(context.Background())
	tr := &Transport{c: a.relay.NewClient()}
	tr.c.SetName(a.opts.ClientName)
	a.wg.Go(func() {
		<-ctx.Done()
		chromedp.Cancel(ctx) // close the tabs of this context first
		tcancel()
		tr.Close()
	})
	b, err := chromedp.NewBrowserTransport(tctx, tr, opts...)
	if err != nil {
		tcancel()
		tr.Close()
		return nil, err
	}
	// chromedp turns on target discovery at the browser level when its
	// first context takes the tab a browser started with; an Attacher's
	// first context opens a tab instead, so chromedp never does. Without
	// it, chromedp.BrowserEvents(ctx, target.TargetCreated) would hear of
	// no tab here that it hears of on ExecAllocator and RemoteAllocator.
	if _, err := cdp.Call(ctx, b, target.SetDiscoverTargets, target.SetDiscoverTargetsParams{Discover: true}); err != nil {
		tcancel()
		tr.Close()
		return nil, fmt.Errorf("extcdp: turning on target discovery: %w", err)
	}
	return b, nil
}

// Wait satisfies chromedp.Allocator.
func (a *Allocator) Wait() { a.wg.Wait() }

// Attaches satisfies chromedp.Attacher: the browser runs already.
func (a *Allocator) Attaches() bool { return true }

// Transport is a chromedp.Transport on a relay client: chromedp's messages
// go to the relay as they are, with no JSON in between.
type Transport struct {
	c      *Client
	debugf func(string, ...any)
}

// SetDebugf sets the protocol logger; chromedp.WithDebugf reaches it
// through NewBrowserTransport. Messages are encoded only when it is set.
func (t *Transport) SetDebugf(f func(string, ...any)) { t.debugf = f }

func (t *Transport) logf(dir string, m *cdproto.Message) {
	if b, err := appendMessage(nil, m); err == nil {
		t.debugf("%s %s", dir, b)
	}
}

// NewTransport connects a new client to r as a chromedp.Transport, for use
// with chromedp.NewBrowserTransport.
func NewTransport(r *Relay) *Transport { return &Transport{c: r.NewClient()} }

// Read satisfies chromedp.Transport.
func (t *Transport) Read(ctx context.Context, msg *cdproto.Message) error {
	m, err := t.c.Next(ctx)
	if err != nil {
		return err
	}
	*msg = *m
	if t.debugf != nil {
		t.logf("<-", m)
	}
	return nil
}

// Write satisfies chromedp.Transport.
func (t *Transport) Write(_ context.Context, msg *cdproto.Message) error {
	if t.debugf != nil {
		t.logf("->", msg)
	}
	t.c.Handle(msg)
	return nil
}

// Close satisfies chromedp.Transport.
func (t *Transport) Close() error {
	t.c.Close()
	return nil
}
