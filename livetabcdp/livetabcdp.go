// Package livetabcdp declares the Livetab domain: the CDP methods that
// livetab's relay adds to what Chrome offers, for what only the extension
// can do (the person's shared tabs, a client's own policy, closing a tab on
// purpose, file access). They are declared as cdproto declares Chrome's own,
// a [cdp.Command] value each with its params and result types, so any
// chromedp context reaches them:
//
//	info, err := chromedp.CallBrowser(ctx, livetabcdp.GetInfo, cdp.Empty{})
//	if livetabcdp.IsUnsupported(err) {
//		// a plain Chrome: no extension behind this connection, fall back
//	}
//
// The relay (package extcdp) answers them on the browser session and on
// any page session alike. A plain Chrome answers every Livetab method with
// the JSON-RPC error -32601 (method not found), which [IsUnsupported]
// reports: the caller then falls back to what plain CDP can do.
//
// The package depends on cdproto alone, so that capture, upload, page and
// programs outside livetab can import it without the relay.
package livetabcdp

import (
	"errors"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
)

// The method names, for the relay's dispatch and for raw CDP clients.
const (
	CommandGetInfo       = "Livetab.getInfo"
	CommandGetActiveTab  = "Livetab.getActiveTab"
	CommandGetTabs       = "Livetab.getTabs"
	CommandCloseTab      = "Livetab.closeTab"
	CommandSetPolicy     = "Livetab.setPolicy"
	CommandKeepTab       = "Livetab.keepTab"
	CommandEnable        = "Livetab.enable"
	CommandDownloadBlob  = "Livetab.downloadBlob"
	CommandSetClientName = "Livetab.setClientName"
	CommandNoteAction    = "Livetab.noteAction"

	CommandOpenTransfer  = "Livetab.openTransfer"
	CommandWriteTransfer = "Livetab.writeTransfer"
	CommandReadTransfer  = "Livetab.readTransfer"
	CommandCloseTransfer = "Livetab.closeTransfer"
	CommandTransferFile  = "Livetab.transferFile"

	EventPausedChanged = "Livetab.pausedChanged"
)

// Domain is the prefix of every Livetab method.
const Domain = "Livetab."

// GetInfoResult is the result of the command Livetab.getInfo.
type GetInfoResult struct {
	Version     string `json:"version"`     // the extension's version
	ExtensionID string `json:"extensionId"` // its id, chrome-extension://<id>
	UserAgent   string `json:"userAgent"`   // the browser's user agent
	// FileAccess is whether the person allowed the extension to read
	// local files ("Allow access to file URLs" at chrome://extensions):
	// DOM.setFileInputFiles needs it.
	FileAccess bool   `json:"fileAccess"`
	Bridge     string `json:"bridge"` // the version of the bridge protocol
	// Paused is whether the person paused livetab in the extension's
	// popup: until they resume, no tab is attached and every command that
	// needs one fails with the pause error.
	Paused bool `json:"paused"`
}

// Enable makes the relay send the calling connection the Livetab domain's
// events (Livetab.pausedChanged). They are off by default, since a client
// that does not know the domain may treat an unknown event as an error.
var Enable = cdp.Command[cdp.Empty, cdp.Empty]{Method: CommandEnable}

// PausedChangedEvent is the event Livetab.pausedChanged: the person paused
// or resumed livetab in the extension's popup. A client gets it at the
// browser level after Livetab.enable.
type PausedChangedEvent struct {
	Paused bool `json:"paused"`
}

// SetClientNameParams are the params of Livetab.setClientName.
type SetClientNameParams struct {
	Name string `json:"name"`
}

// SetClientName names the calling connection for the person: the
// extension's popup lists the connected programs by name, with the tabs
// each drives, and lets the person stop one. An endpoint client may give
// the name in its URL instead (…&client=NAME).
var SetClientName = cdp.Command[SetClientNameParams, cdp.Empty]{Method: CommandSetClientName}

// NoteActionParams are the params of Livetab.noteAction.
type NoteActionParams struct {
	// Action is what the program did, in its own words: a tool's name.
	Action string `json:"action"`
	// Decision is the policy's word on it: "allowed", "denied",
	// "confirmed".
	Decision string `json:"decision,omitempty"`
}

// NoteAction shows the person, among the last actions in the extension's
// popup, what the calling program did beyond its CDP commands: livetab mcp
// notes each tool call with the policy's decision. Sent on a page session,
// it is shown on that tab. No other client hears of it.
var NoteAction = cdp.Command[NoteActionParams, cdp.Empty]{Method: CommandNoteAction}

// GetInfo describes the extension behind the connection.
var GetInfo = cdp.Command[cdp.Empty, GetInfoResult]{Method: CommandGetInfo}

// GetActiveTabResult is the result of the command Livetab.getActiveTab.
type GetActiveTabResult struct {
	TargetID target.ID `json:"targetId"`
}

// GetActiveTab returns the tab the person is looking at: the active tab of
// the newest window, among the tabs the caller may see. It fails when there
// is none.
var GetActiveTab = cdp.Command[cdp.Empty, GetActiveTabResult]{Method: CommandGetActiveTab}

// TabEntry is one tab in Livetab.getTabs. A client held to shared tabs
// (SetPolicyParams.SharedOnly) is told only of the tabs it may use.
type TabEntry struct {
	TargetID target.ID `json:"targetId"`
	TabID    int64     `json:"tabId"` // chrome.tabs id
	URL      string    `json:"url"`
	Title    string    `json:"title"`
	Active   bool      `json:"active"` // the active tab of its window
	// Shared is whether the person shared the tab in the extension's
	// popup: a client whose policy is sharedOnly may use only these,
	// the tabs livetab opened and their popups.
	Shared  bool `json:"shared"`
	Created bool `json:"createdByLivetab"` // livetab opened it
}

// GetTabsResult is the result of the command Livetab.getTabs.
type GetTabsResult struct {
	Tabs []TabEntry `json:"tabs"`
}

// GetTabs lists the tabs the caller may see.
var GetTabs = cdp.Command[cdp.Empty, GetTabsResult]{Method: CommandGetTabs}

// CloseTabParams are the parameters of the command Livetab.closeTab.
type CloseTabParams struct {
	TargetID target.ID `json:"targetId"`
}

// CloseTab closes the tab even when the person opened it: the explicit
// request that livetab's closing rule asks for, where Target.closeTarget
// (what chromedp sends when a context is cancelled) only lets go of a tab
// the connection did not open
// (docs/decisions/2026-11-22-cancel-closes-only-tabs-livetab-opened.md).
var CloseTab = cdp.Command[CloseTabParams, cdp.Empty]{Method: CommandCloseTab}

// KeepTabParams are the parameters of the command Livetab.keepTab.
type KeepTabParams struct {
	TargetID target.ID `json:"targetId"`
}

// KeepTab gives a tab the calling connection opened to the person: it
// outlives the connection and the context that opened it, whose cancel
// (Target.closeTarget) then only detaches, and every client may see it,
// as any tab the person opened
// (docs/decisions/2026-11-22-cancel-closes-only-tabs-livetab-opened.md).
// It fails for a tab the connection did not open.
var KeepTab = cdp.Command[KeepTabParams, cdp.Empty]{Method: CommandKeepTab}

// SetPolicyParams are the parameters of the command Livetab.setPolicy.
type SetPolicyParams struct {
	// SharedOnly keeps the client to the tabs the person shared, the tabs
	// livetab opened and their popups.
	SharedOnly bool `json:"sharedOnly"`
	// Domains are host patterns as policy.MatchURL reads them
	// ("example.com", "*.example.com", "10.0.0.0/8"); none allow every
	// host.
	Domains []string `json:"domains"`
	// BlockPrivate keeps every request of the client's tabs and of their
	// popups (documents, fetches, images, sockets, their frames' and
	// workers') off loopback, private and link-local addresses written as
	// IP literals (and localhost), but for the hosts in PrivateAllowed; no
	// name is resolved.
	BlockPrivate   bool     `json:"blockPrivate,omitzero"`
	PrivateAllowed []string `json:"privateAllowed,omitzero"`
	// GuardsLoads says the client holds its tabs' document loads to
	// Domains itself, before they start (Fetch, as page's guard does), and
	// wants a refused load aborted so that its tab stays. Without it the
	// extension blocks a page-started load of a tab the client drives
	// outside Domains: the tab shows Chrome's error page, which ends the
	// client's session there, and no script's location change ever shows
	// the client a page outside its domains.
	GuardsLoads bool `json:"guardsLoads,omitzero"`
}

// SetPolicy sets the calling client's own policy, until it disconnects.
// The relay attaches the client only to the tabs the policy allows, refuses
// its navigations and new tabs outside the domains and ends its sessions on
// a tab that leaves them; the extension blocks what pages of livetab's tabs
// open outside them. Other clients are not bound.
var SetPolicy = cdp.Command[SetPolicyParams, cdp.Empty]{Method: CommandSetPolicy}

// DownloadBlobParams are the parameters of the command
// Livetab.downloadBlob.
type DownloadBlobParams struct {
	// URL is a blob: URL, or an http(s) URL, of the tab's own origin.
	URL string `json:"url"`
	// Filename is a name for the file in the person's Downloads folder
	// (letters, digits, ". _ -" and spaces); others are left to Chrome.
	Filename string `json:"filename,omitzero"`
}

// DownloadBlobResult is the result of the command Livetab.downloadBlob.
type DownloadBlobResult struct {
	// GUID is the download's guid in the Browser.download* events.
	GUID string `json:"guid"`
}

// DownloadBlob downloads a blob: URL the tab's page made, as the page's own
// <a download> would, through chrome.downloads: the browser writes the
// bytes to disk at disk speed, and the download is reported and placed as
// any of the tab's downloads (Browser.setDownloadBehavior and the
// Browser.download* events). Unlike a download the page starts, it is not
// held to Chrome's one automatic download per page, after which Chrome
// asks the person. Send it on the tab's session: the URL's origin must be
// the tab's. An http(s) URL (an extension from before 2026-11-25 refuses
// it: read the URL in the page then) is fetched by the browser with the
// person's cookies, as a link of the page would be, and sends no Network
// event per chunk to the tab's clients; one that redirects to another
// origin ends canceled, its file removed.
var DownloadBlob = cdp.Command[DownloadBlobParams, DownloadBlobResult]{Method: CommandDownloadBlob}

// codeMethodNotFound is JSON-RPC's "method not found", which Chrome answers
// for a method it does not know.
const codeMethodNotFound = -32601

// IsUnsupported reports whether err is a browser's answer that it does not
// know the method: a plain Chrome, with no livetab extension behind the
// connection, answers every Livetab method so, and the caller falls back
// to plain CDP. chromedp returns that answer as a *cdproto.Error, which
// IsUnsupported finds however deeply it is wrapped; the message text is not
// read, since an error from elsewhere (a page's text in it, say) could
// carry the same words.
func IsUnsupported(err error) bool {
	var ce *cdproto.Error
	return errors.As(err, &ce) && ce.Code == codeMethodNotFound
}
