package livetab

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/livetab/livetab/internal/activeport"
	"github.com/livetab/livetab/internal/hidden"
	"github.com/livetab/livetab/livetabcdp"
)

// ActivePortFile is the file Chrome writes into its user data directory when
// remote debugging is on (chrome://inspect/#remote-debugging in Chrome 144
// and later, or --remote-debugging-port): line 1 the port, line 2 the path
// of the browser WebSocket, /devtools/browser/<id>.
const ActivePortFile = activeport.File

// ErrNoNativeChrome means no Chrome with remote debugging on was found.
var ErrNoNativeChrome = errors.New("no Chrome with remote debugging on: open chrome://inspect/#remote-debugging in Chrome 144 or later and allow it, or start Chrome with --remote-debugging-port=0 --user-data-dir=DIR and pass DIR")

// ChromeProfileDirs returns the usual user data directories of Chrome and
// Chromium on this system, where [ConnectNative] looks for
// DevToolsActivePort when it is given no directory.
func ChromeProfileDirs() []string {
	var dirs []string
	switch runtime.GOOS {
	case "windows":
		if d := os.Getenv("LOCALAPPDATA"); d != "" {
			for _, p := range []string{`Google\Chrome\User Data`, `Google\Chrome Beta\User Data`, `Google\Chrome SxS\User Data`, `Chromium\User Data`} {
				dirs = append(dirs, filepath.Join(d, p))
			}
		}
	case "darwin":
		if d, err := os.UserConfigDir(); err == nil { // ~/Library/Application Support
			for _, p := range []string{"Google/Chrome", "Google/Chrome Beta", "Google/Chrome Canary", "Chromium"} {
				dirs = append(dirs, filepath.Join(d, p))
			}
		}
	default:
		if d, err := os.UserConfigDir(); err == nil { // $XDG_CONFIG_HOME or ~/.config
			for _, p := range []string{"google-chrome", "google-chrome-beta", "google-chrome-unstable", "chromium"} {
				dirs = append(dirs, filepath.Join(d, p))
			}
		}
		if h, err := os.UserHomeDir(); err == nil {
			dirs = append(dirs, filepath.Join(h, "snap", "chromium", "common", "chromium"))
		}
	}
	return dirs
}

// NativeURL reads DevToolsActivePort in a Chrome user data directory and
// returns the browser WebSocket URL, ws://127.0.0.1:PORT/devtools/browser/ID.
// With an empty dir it tries [ChromeProfileDirs] in order and returns the
// first whose Chrome is running.
//
// A file left by a Chrome that crashed names a port that any local program
// may have taken since: NativeURL returns a URL only when the port is held
// by the process that holds the profile (checked in /proc on Linux, without
// connecting; elsewhere only that this process lives), and an error
// wrapping [ErrNoNativeChrome] otherwise.
func NativeURL(dir string) (string, error) {
	if dir != "" {
		return readActivePort(dir)
	}
	var tried []string
	for _, d := range ChromeProfileDirs() {
		if _, err := os.Stat(filepath.Join(d, ActivePortFile)); err != nil {
			continue
		}
		tried = append(tried, d)
		if u, err := readActivePort(d); err == nil {
			return u, nil
		}
	}
	if len(tried) > 0 {
		return "", fmt.Errorf("livetab: %s in %s names a port no running Chrome of that profile holds (Chrome was closed?): %w", ActivePortFile, strings.Join(tried, ", "), ErrNoNativeChrome)
	}
	return "", fmt.Errorf("livetab: no %s in %s: %w", ActivePortFile, strings.Join(ChromeProfileDirs(), ", "), ErrNoNativeChrome)
}

func readActivePort(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, ActivePortFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("livetab: no %s in %s: %w", ActivePortFile, dir, ErrNoNativeChrome)
	}
	if err != nil {
		return "", fmt.Errorf("livetab: reading %s: %w", ActivePortFile, err)
	}
	port, _, err := activeport.Parse(b)
	if err != nil {
		return "", fmt.Errorf("livetab: in %s, %w: restart remote debugging in Chrome", dir, err)
	}
	if err := activeport.CheckOwner(dir, port); err != nil {
		return "", fmt.Errorf("livetab: %s in %s names port %d, but %w: start Chrome (or its remote debugging) again: %w", ActivePortFile, dir, port, err, ErrNoNativeChrome)
	}
	u, _ := activeport.URL(b)
	return u, nil
}

// ConnectNative gives the livetab allocator over Chrome's own remote
// debugging, for users without the extension: it finds DevToolsActivePort
// in profileDir (a Chrome user data directory; empty for the usual ones, see
// [NativeURL]) and returns an allocator context on that browser.
//
// The closing rule is livetab's: cancelling a chromedp context closes its
// tab only when this connection created it. A tab the user had, attached
// with chromedp.WithTargetID, is detached and left open. Send
// [livetabcdp.CloseTab] (as extcdp answers it too) to close one on purpose.
func ConnectNative(ctx context.Context, profileDir string) (context.Context, context.CancelFunc, error) {
	u, err := NativeURL(profileDir)
	if err != nil {
		return nil, nil, err
	}
	actx, cancel := NewNativeAllocator(ctx, u)
	return actx, cancel, nil
}

// NativeAllocator is a chromedp allocator on a browser's own debugging
// WebSocket, with livetab's closing rule (see [ConnectNative]). It
// implements chromedp.Attacher: each chromedp.NewContext is a tab of that
// browser, never a new browser.
type NativeAllocator struct {
	wsURL string
	wg    sync.WaitGroup
}

// NewNativeAllocator returns an allocator context on the browser WebSocket
// wsURL (ws://HOST:PORT/devtools/browser/ID), as [ConnectNative] does after
// it found the URL.
func NewNativeAllocator(parent context.Context, wsURL string) (context.Context, context.CancelFunc) {
	return chromedp.NewAllocatorContext(parent, &NativeAllocator{wsURL: wsURL})
}

// Allocate satisfies chromedp.Allocator.
func (a *NativeAllocator) Allocate(ctx context.Context, opts ...chromedp.BrowserOption) (*chromedp.Browser, error) {
	if chromedp.FromContext(ctx) == nil {
		return nil, chromedp.ErrInvalidContext
	}
	// The connection outlives ctx until the tabs of the context are closed.
	wctx, cancel := context.WithCancel(context.Background())
	dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
	defer dcancel()
	conn, err := remote.DialContext(dctx, a.wsURL)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("livetab: dialing Chrome's debugging WebSocket (did Chrome ask to allow remote debugging? is it still running?): %w", err)
	}
	a.wg.Go(func() {
		<-ctx.Done()
		chromedp.Cancel(ctx) // close the tabs this connection opened first
		cancel()
	})
	return chromedp.NewBrowserTransport(wctx, newGuard(conn), opts...)
}

// Wait satisfies chromedp.Allocator.
func (a *NativeAllocator) Wait() { a.wg.Wait() }

// Attaches satisfies chromedp.Attacher: the browser runs already.
func (a *NativeAllocator) Attaches() bool { return true }

// msgKey names a command for matching its reply: ids are per session.
type msgKey struct {
	sid target.SessionID
	id  int64
}

// guard is a chromedp.Transport around a browser WebSocket that keeps
// livetab's closing rule, the rule extcdp's relay keeps for the extension
// (docs/decisions/2026-11-22-native-backend-keeps-the-closing-rule.md).
//
// chromedp cancels a context with detachFromTarget, then closeTarget, then
// polls getTargets until the target is gone. For a target this connection
// did not create, guard sends Target.getTargetInfo in place of closeTarget,
// so that the reply keeps Chrome's ordering and its error for an unknown
// target, and turns a successful reply into closeTarget's {"success":true}.
type guard struct {
	conn *remote.Conn

	mu      sync.Mutex
	created map[target.ID]bool
	hidden  hidden.Tabs
	creates map[msgKey]bool      // pending Target.createTarget
	spared  map[msgKey]target.ID // pending closeTarget turned into getTargetInfo
	lists   map[msgKey]bool      // pending Target.getTargets
}

func newGuard(conn *remote.Conn) *guard {
	return &guard{
		conn:    conn,
		created: map[target.ID]bool{},
		hidden:  hidden.Tabs{},
		creates: map[msgKey]bool{},
		spared:  map[msgKey]target.ID{},
		lists:   map[msgKey]bool{},
	}
}

// SetDebugf passes chromedp's protocol logger on to the connection.
func (g *guard) SetDebugf(f func(string, ...any)) { g.conn.SetDebugf(f) }

// Close satisfies chromedp.Transport.
func (g *guard) Close() error { return g.conn.Close() }

// Write satisfies chromedp.Transport.
func (g *guard) Write(ctx context.Context, msg *cdproto.Message) error {
	switch msg.Method {
	case target.CommandCreateTarget:
		g.mu.Lock()
		g.creates[msgKey{msg.SessionID, msg.ID}] = true
		g.mu.Unlock()
	case target.CommandGetTargets:
		g.mu.Lock()
		g.lists[msgKey{msg.SessionID, msg.ID}] = true
		g.mu.Unlock()
	case livetabcdp.CommandCloseTab:
		// The explicit request the closing rule asks for: Chrome closes
		// any tab on Target.closeTarget.
		m := *msg
		m.Method = target.CommandCloseTarget
		return g.conn.Write(ctx, &m)
	case target.CommandCloseTarget:
		var p target.CloseTargetParams
		if err := jsonv2.Unmarshal(msg.Params, &p); err != nil {
			break // Chrome answers the bad params itself
		}
		g.mu.Lock()
		own := g.created[p.TargetID]
		if own {
			delete(g.created, p.TargetID)
		} else {
			g.spared[msgKey{msg.SessionID, msg.ID}] = p.TargetID
			g.hidden.Hide(p.TargetID, time.Now())
		}
		g.mu.Unlock()
		if !own {
			m := *msg
			m.Method = target.CommandGetTargetInfo
			return g.conn.Write(ctx, &m)
		}
	}
	return g.conn.Write(ctx, msg)
}

// Read satisfies chromedp.Transport.
func (g *guard) Read(ctx context.Context, msg *cdproto.Message) error {
	if err := g.conn.Read(ctx, msg); err != nil {
		return err
	}
	if msg.ID == 0 {
		return nil
	}
	k := msgKey{msg.SessionID, msg.ID}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.creates[k]:
		delete(g.creates, k)
		var r target.CreateTargetResult
		if msg.Error == nil && jsonv2.Unmarshal(msg.Result, &r) == nil && r.TargetID != "" {
			g.created[r.TargetID] = true
		}
	case g.spared[k] != "":
		delete(g.spared, k)
		if msg.Error == nil {
			msg.Result = jsonv2.Value(`{"success":true}`)
		}
	case g.lists[k]:
		delete(g.lists, k)
		if msg.Error == nil && g.hidden.Any(time.Now()) {
			msg.Result = g.filterTargets(msg.Result)
		}
	}
	return nil
}

// filterTargets drops the hidden targets from a getTargets result, keeping
// every other target's info as Chrome sent it. g.mu is held.
func (g *guard) filterTargets(res jsonv2.Value) jsonv2.Value {
	var r struct {
		TargetInfos []jsonv2.Value `json:"targetInfos"`
	}
	if err := jsonv2.Unmarshal(res, &r); err != nil {
		return res
	}
	now := time.Now()
	kept := r.TargetInfos[:0]
	for _, info := range r.TargetInfos {
		var t struct {
			TargetID target.ID `json:"targetId"`
		}
		if jsonv2.Unmarshal(info, &t) == nil && g.hidden.Hidden(t.TargetID, now) {
			continue
		}
		kept = append(kept, info)
	}
	r.TargetInfos = kept
	b, err := jsonv2.Marshal(r)
	if err != nil {
		return res
	}
	return b
}
