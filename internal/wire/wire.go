// Package wire defines the frames that travel between the livetab extension
// and the Go bridge over one WebSocket.
//
// One frame shape mirrors a CDP message, plus the tab it concerns:
//
//	{"id":7,"method":"Runtime.evaluate","params":{...},"tabId":12,"sessionId":"..."}
//	{"id":7,"result":{...}}                      a reply
//	{"id":7,"error":{"code":-32000,"message":"..."}}
//	{"method":"Page.loadEventFired","params":{...},"tabId":12}   an event
//
// A method in the "ext." namespace is an operation of the extension itself
// (attach the debugger, list or create tabs, ...). Any other method is a CDP
// command that the extension forwards unchanged with
// chrome.debugger.sendCommand({tabId, sessionId}, method, params); sessionId
// is set only for a flat child session of the tab (a cross-origin iframe).
// Params and results are carried as raw JSON, never decoded on the way
// (docs/decisions/2026-11-22-wire-frames-mirror-cdp.md).
//
// # Handshake
//
// The extension dials the bridge URL and the two ends prove to each other
// that they hold the pairing token without ever sending it (see
// pairing.go for the proofs, which cover both nonces and the bridge's port):
//
//	extension → {"method":"ext.hello","params":{"nonce":NE,"version":V,"userAgent":UA,
//	              "extensionId":ID,"attached":[tabIds],"fileAccess":bool}}
//	bridge    → {"method":"ext.challenge","params":{"nonce":NB,"proof":P}}
//	extension → {"method":"ext.proof","params":{"proof":Q}}
//	bridge    → {"method":"ext.welcome","params":{"version":V}}
//
// The extension checks P before it answers, and obeys nothing (no request
// is even read) before the welcome. The bridge checks Q before it welcomes,
// and reads nothing else before that. Either end refuses by closing the
// socket: the bridge with a close code from this package and a reason that
// says what to do. A hello with a "token" field comes from an extension
// older than this handshake and is refused with CloseBadHello.
//
// # Heartbeat
//
// The extension sends {"method":"ext.ping"} every 20 s at most; the bridge
// answers {"method":"ext.pong"}. A JSON message, not a WebSocket ping frame,
// is what keeps an MV3 service worker alive.
//
// # Operations (bridge → extension, each answered by a reply with the same id)
//
//	ext.attach      {tabId}                 → {targetId}   chrome.debugger.attach(…, "1.3"); "already attached" counts as success
//	ext.detach      {tabId}                 → {}
//	ext.targets     {}                      → {targets:[TabInfo]}   every tab, with its CDP targetId
//	ext.createTab   {url, newWindow, active, windowId?, holdFor?} → TabInfo
//	ext.unguard     {tabId, keepFor?}       → {}   a popup whose opener no client with a policy drives: the
//	                                               extension's popup rules let go of it and load again a first
//	                                               load they blocked; with keepFor, only the rules of those
//	                                               owners keep holding it
//	ext.closeTab    {tabId, quiet?, leave?} → {}
//	ext.activateTab {tabId}                 → {}
//	ext.window      {tabId}                 → {windowId, left, top, width, height, state, contentWidth, contentHeight}
//	ext.setWindow   {tabId, only, left?, top?, width?, height?, state?, contentWidth?, contentHeight?} → {}
//	                                               only when every tab of the window is in only; content* sizes the window around the page
//	ext.fileAccess  {}                      → {allowed}
//	ext.cancelDownload {id}                 → {}   chrome.downloads.cancel; a download already done is left
//	ext.setPolicy   {owner, sharedOnly, domains, blockPrivate?, privateAllowed?} → {}  one relay client's policy (the relay enforces it for
//	                                               that client); the extension keeps the tabs pages of livetab's
//	                                               tabs open within the owner's domains. sharedOnly false and no
//	                                               domains drop the owner. Every owner is dropped when the
//	                                               connection ends; the relay pushes its clients' after a hello.
//
// TabInfo is {tabId, targetId, windowId, openerTabId?, url, title, active,
// attached, shared?, created?, popup?}: shared when the person shared the
// tab in the popup, created when livetab opened it, popup when a page of a
// tab livetab drives or opened opened it (webNavigation's
// onCreatedNavigationTarget: openerTabId is also set on a tab made with
// Ctrl+T while such a tab was active).
//
// # Events (extension → bridge, no id)
//
//	any CDP method   params, tabId, sessionId?     from chrome.debugger.onEvent
//	ext.detached     {tabId, reason}               chrome.debugger.onDetach
//	ext.reattached   {tabId}                       onDetach (target_closed) of a tab that lives on, attached again at once
//	ext.tabCreated   TabInfo                       chrome.tabs.onCreated
//	ext.tabUpdated   TabInfo                       chrome.tabs.onUpdated (url or title changed)
//	ext.tabRemoved   {tabId}                       chrome.tabs.onRemoved
//	ext.download     DownloadInfo                  chrome.downloads.onCreated, and onChanged with the whole item after the change
//
// # Large frames
//
// A frame whose UTF-8 text is longer than ChunkSize is sent as binary
// WebSocket messages of at most ChunkSize+ChunkHeader bytes: byte 0 holds
// flags (bit 0: last), bytes 1–4 a big-endian stream number chosen by the
// sender, the rest is the next piece of the frame's text. The receiver
// concatenates the pieces of one stream and reads the result as one frame.
// Small frames are plain text messages.
package wire

import (
	"fmt"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
)

// ChunkSize is the largest payload of one binary chunk message.
const ChunkSize = 1 << 20

// ChunkHeader is the size of the header in front of each chunk's payload.
const ChunkHeader = 5

// ChunkLast is the flag of the final chunk of a stream.
const ChunkLast = 1

// Close codes the bridge uses when it refuses or ends an extension's socket.
const (
	CloseBadToken       = 4001 // the extension's proof was wrong: pair again
	CloseBadHello       = 4002 // the first frame was not a valid hello (or an old one with a token)
	CloseAlreadyPaired  = 4009 // another extension is connected
	CloseTooBig         = 4013 // a frame exceeded the bridge's limit
	CloseBridgeShutdown = 4000 // the bridge is closing
)

// Method names of the extension's own operations and events.
const (
	Hello       = "ext.hello"
	Welcome     = "ext.welcome"
	Ping        = "ext.ping"
	Pong        = "ext.pong"
	Attach      = "ext.attach"
	Detach      = "ext.detach"
	Targets     = "ext.targets"
	CreateTab   = "ext.createTab"
	CloseTab    = "ext.closeTab"
	ActivateTab = "ext.activateTab"
	// KeepTab {tabId}: a program handed its tab to the person
	// (Livetab.keepTab); the extension reports it as created by livetab no
	// more, so that a relay started later takes it for the person's too.
	KeepTab    = "ext.keepTab"
	FileAccess = "ext.fileAccess"
	// Window reads a tab's window: {windowId, left, top, width, height,
	// state, contentWidth, contentHeight}.
	Window = "ext.window"
	// SetWindow changes a tab's window {tabId, only, left?, top?, width?,
	// height?, state?} when every tab in it is one of only.
	SetWindow = "ext.setWindow"
	// CancelDownload cancels chrome.downloads item {id}.
	CancelDownload = "ext.cancelDownload"
	// EndScript ends the script that runs on tab {tabId}'s page, whose
	// attachment has Debugger on: Debugger.pause, and at its
	// Debugger.paused, Debugger.resume with terminateOnResume → {ended}.
	EndScript = "ext.endScript"
	// DownloadBlob downloads a blob: or http(s) URL of a tab's origin with
	// chrome.downloads (DownloadBlobParams).
	DownloadBlob = "ext.downloadBlob"
	SetPolicy    = "ext.setPolicy"
	Unguard      = "ext.unguard"
	Detached     = "ext.detached"
	Reattached   = "ext.reattached"
	TabCreated   = "ext.tabCreated"
	TabUpdated   = "ext.tabUpdated"
	TabRemoved   = "ext.tabRemoved"
	Download     = "ext.download"
	// FileLoad is the extension's event when a tab it debugs starts to
	// load a file: URL (FileLoadParams), however the load began: a page's
	// own location change never passes the relay.
	FileLoad = "ext.fileLoad"
	// Paused is the extension's event when the person pauses or resumes
	// livetab in its popup (PausedParams).
	Paused = "ext.paused"
	// Activity is the relay's report to the extension of who drives which
	// tabs and what they did last (ActivityParams); only the popup shows it.
	Activity = "ext.activity"
	// StopClient is the extension's event when the person stops one client
	// in the popup (StopClientParams).
	StopClient = "ext.stopClient"
)

// FileLoadParams is the payload of ext.fileLoad.
type FileLoadParams struct {
	TabID int64  `json:"tabId"`
	URL   string `json:"url"`
}

// ReasonStopped is the ext.detached reason of a tab the person stopped
// livetab driving in the popup.
const ReasonStopped = "stopped"

// ActivityParams is the payload of ext.activity: the connected clients and
// the last actions, oldest first, at most MaxActions.
type ActivityParams struct {
	Clients []ClientActivity `json:"clients"`
	Actions []Action         `json:"actions"`
}

// MaxActions bounds the actions an ext.activity carries.
const MaxActions = 50

// ClientActivity is one connected client: the name it gave at connect and
// the tabs it has sessions on.
type ClientActivity struct {
	ID   string  `json:"id"`
	Name string  `json:"name"`
	Tabs []int64 `json:"tabs"`
	// Since is when it connected, in Unix milliseconds.
	Since int64 `json:"since"`
}

// Action is one thing a client did: a run of Count commands of one family
// (What: "Runtime", "Page.navigate", a tool of livetab mcp) on one tab (0
// for the browser level), the last at At (Unix milliseconds). Decision is
// the policy's word on a tool call ("allowed", "denied", "confirmed").
type Action struct {
	Client   string `json:"client"`
	Name     string `json:"name"`
	TabID    int64  `json:"tabId,omitzero"`
	What     string `json:"what"`
	Decision string `json:"decision,omitzero"`
	Count    int    `json:"count"`
	At       int64  `json:"at"`
}

// StopClientParams is the payload of ext.stopClient.
type StopClientParams struct {
	Client string `json:"client"`
}

// StoppedMessage is the error of every command of a client the person
// stopped in the popup.
const StoppedMessage = "livetab: stopped by the person in the livetab popup; this connection may no longer use their browser"

// PausedParams is the payload of ext.paused. While paused, the extension
// has detached from every tab and refuses every attach and command.
type PausedParams struct {
	Paused bool `json:"paused"`
}

// PausedMessage is the error every refused command gets while the person
// has livetab paused, from the relay and, as a backstop, the extension.
const PausedMessage = "livetab: paused by the person in the livetab popup; ask them to resume"

// DownloadInfo is a chrome.downloads item as the extension reports it.
// State is "in_progress", "interrupted" or "complete"; Filename is the
// absolute path of the file in the user's Downloads folder.
type DownloadInfo struct {
	ID            int64   `json:"id"`
	URL           string  `json:"url"`
	FinalURL      string  `json:"finalUrl"`
	Filename      string  `json:"filename"`
	Mime          string  `json:"mime"`
	State         string  `json:"state"`
	BytesReceived float64 `json:"bytesReceived"`
	TotalBytes    float64 `json:"totalBytes"`
	Error         string  `json:"error,omitzero"`
	// StartTime is when Chrome began the download (ms since the epoch),
	// Referrer the page it began from; zero from an older extension.
	StartTime float64 `json:"startTime,omitzero"`
	Referrer  string  `json:"referrer,omitzero"`
	// SourceTabID is the tab whose page opened the new tab this download
	// began in (a link with target=_blank, window.open): Chrome closes
	// such a tab, which nothing debugged, once its load turned into the
	// download. Zero for any other download.
	SourceTabID int64 `json:"sourceTabId,omitzero"`
	// ReferrerTabID is the one tab that showed the page the download was
	// begun from (Referrer) when the extension heard of it; zero when
	// none or several did.
	ReferrerTabID int64 `json:"referrerTabId,omitzero"`
	// RecentTabIDs, when ReferrerTabID names no tab (none or several open
	// tabs show Referrer), are the tabs, open or closed, that showed it in
	// the last minute: the page changed its URL or closed its tab before
	// Chrome began the download, or a frame of its own began it. Absent
	// when the extension cannot say.
	RecentTabIDs []int64 `json:"recentTabIds,omitzero"`
}

// Frame is one message on the extension's socket.
type Frame struct {
	ID        int64          `json:"id,omitzero"`
	Method    string         `json:"method,omitzero"`
	Params    jsonv2.Value   `json:"params,omitzero"`
	Result    jsonv2.Value   `json:"result,omitzero"`
	Error     *cdproto.Error `json:"error,omitzero"`
	TabID     int64          `json:"tabId,omitzero"`
	SessionID string         `json:"sessionId,omitzero"`
}

// IsExt reports whether the frame's method is an extension operation or
// event rather than a CDP method.
func (f *Frame) IsExt() bool {
	return len(f.Method) > 4 && f.Method[:4] == "ext."
}

// HelloParams is the payload of the extension's first frame.
type HelloParams struct {
	// Token is only ever set by an extension older than the pairing by
	// proof, which sent its token; a bridge refuses such a hello.
	Token string `json:"token,omitzero"`
	// Nonce is the extension's fresh nonce for the proofs. A bridge clears
	// it (and Token) before it shows the hello to anyone.
	Nonce       string  `json:"nonce,omitzero"`
	Version     string  `json:"version"`
	UserAgent   string  `json:"userAgent"`
	ExtensionID string  `json:"extensionId"`
	Attached    []int64 `json:"attached"`
	FileAccess  bool    `json:"fileAccess"`
	// Paused: the person paused livetab in the popup (ext.paused).
	Paused bool `json:"paused,omitzero"`
	// FullVersion is Chromium's full version ("156.0.8078.108"), which
	// UserAgent, reduced, hides ("156.0.0.0"); empty when the browser
	// does not say.
	FullVersion string `json:"fullVersion,omitzero"`
}

// TabInfo describes one tab of the user's browser.
type TabInfo struct {
	TabID    int64  `json:"tabId"`
	TargetID string `json:"targetId"`
	WindowID int64  `json:"windowId"`
	// OpenerTabID is the tab whose page opened this one (webNavigation),
	// never Chrome's tab-strip opener, which is only the active tab.
	OpenerTabID int64  `json:"openerTabId,omitzero"`
	URL         string `json:"url"`
	Title       string `json:"title"`
	Active      bool   `json:"active"`
	Attached    bool   `json:"attached"`
	Shared      bool   `json:"shared,omitzero"`
	Created     bool   `json:"created,omitzero"`
	Popup       bool   `json:"popup,omitzero"`
}

// PolicyParams is the payload of ext.setPolicy: the policy of one relay
// client, its Owner, for as long as that client is connected.
type PolicyParams struct {
	Owner      string   `json:"owner,omitzero"`
	SharedOnly bool     `json:"sharedOnly"`
	Domains    []string `json:"domains"`
	// BlockPrivate keeps popups off loopback, private and link-local
	// addresses written as IP literals (and localhost), but for the hosts
	// in PrivateAllowed; no name is resolved.
	BlockPrivate   bool     `json:"blockPrivate,omitzero"`
	PrivateAllowed []string `json:"privateAllowed,omitzero"`
	// Tabs are the tabs the owner drives: the extension blocks their
	// page-started loads outside Domains too, so that a script's
	// navigation never shows the owner a page outside them (unless
	// GuardsLoads), and with BlockPrivate every request of theirs to a
	// private address.
	Tabs []int64 `json:"tabs,omitzero"`
	// GuardsLoads: the owner holds its tabs' document loads itself, and
	// the extension leaves them alone.
	GuardsLoads bool `json:"guardsLoads,omitzero"`
	// Transfer is the base URL of the relay's transfer channel
	// (http://127.0.0.1:<port>/livetab/transfer/): with BlockPrivate, the
	// extension's transfer frame in the owner's tabs still reaches it.
	Transfer string `json:"transfer,omitzero"`
}

// TabParams is the payload of operations and events about one tab.
type TabParams struct {
	TabID int64 `json:"tabId"`
}

// UnguardParams is the payload of ext.unguard.
type UnguardParams struct {
	TabID int64 `json:"tabId"`
	// KeepFor names the policy owners whose clients drive the popup's
	// opener: only their rules keep holding it. Empty: no owner's do.
	KeepFor []string `json:"keepFor,omitzero"`
}

// DetachedParams is the payload of ext.detached.
type DetachedParams struct {
	TabID  int64  `json:"tabId"`
	Reason string `json:"reason"`
}

// CloseTabParams is the payload of ext.closeTab.
type CloseTabParams struct {
	TabID int64 `json:"tabId"`
	// Quiet stops the page's scripts before the tab closes: Chrome runs
	// a closing tab's unload out of the tab strip, where its requests
	// belong to no tab and no rule that names the tab holds them.
	Quiet bool `json:"quiet,omitzero"`
	// Leave answers the page's "Leave site?" question (beforeunload) for
	// a tab the program may close as its own (one a page of its tabs
	// opened): no one else is there to answer it. A tab livetab opened is
	// answered without it; the person's keep the question.
	Leave bool `json:"leave,omitzero"`
}

// CreateTabParams is the payload of ext.createTab.
type CreateTabParams struct {
	URL       string `json:"url"`
	NewWindow bool   `json:"newWindow,omitzero"`
	Active    bool   `json:"active,omitzero"`
	// WindowID opens the tab in that window (of the client's own tabs).
	WindowID int64 `json:"windowId,omitzero"`
	// HoldFor is the owner of an ext.setPolicy that holds the tabs it
	// drives: the extension adds the new tab to that policy's tabs before
	// the tab loads anything, so that its first requests are held too.
	HoldFor string `json:"holdFor,omitzero"`
}

// TargetsResult is the result of ext.targets.
type TargetsResult struct {
	Targets []TabInfo `json:"targets"`
}

// AttachResult is the result of ext.attach.
type AttachResult struct {
	TargetID string `json:"targetId"`
}

// DownloadBlobParams are the parameters of ext.downloadBlob.
type DownloadBlobParams struct {
	TabID    int64  `json:"tabId"`
	URL      string `json:"url"`
	Filename string `json:"filename,omitzero"`
}

// FileAccessResult is the result of ext.fileAccess.
type FileAccessResult struct {
	Allowed bool `json:"allowed"`
}

// Options are the JSON options of every frame: those of cdproto, which
// tolerate invalid UTF-8 that a page can put into a string.
var Options = jsonv2.JoinOptions(jsonv2.DefaultOptionsV2(), jsonv2.AllowInvalidUTF8(true))

// Decode reads one frame from its JSON text.
func Decode(data []byte, f *Frame) error {
	if err := jsonv2.Unmarshal(data, f, Options); err != nil {
		return fmt.Errorf("wire: malformed frame: %w", err)
	}
	return nil
}

// Encode returns the JSON text of f.
func Encode(f *Frame) ([]byte, error) {
	b, err := jsonv2.Marshal(f, Options)
	if err != nil {
		return nil, fmt.Errorf("wire: encoding frame %q: %w", f.Method, err)
	}
	return b, nil
}
