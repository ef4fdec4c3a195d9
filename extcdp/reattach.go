package extcdp

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
)

// Chrome ends an extension's debugger session on a tab when a frame of it
// starts navigating to a URL extensions may not access (an iframe at a
// scheme Chrome does not know, a link to one), with the reason a closed tab
// gives; the tab lives on and the navigation is aborted. The extension
// attaches again at once (ext.reattached) and the relay keeps its sessions:
// it sends the new attachment the commands that set up the old one (domains
// enabled, lifecycle events, auto-attach, emulation, bindings, scripts to
// evaluate on new documents), in their order, and forgets what belonged to
// the old one (execution contexts, node ids, child sessions). Events
// between the two attachments are lost; a load that ended in between is
// told again (see loadSeenAgain).
// docs/decisions/2026-11-24-reattach-after-a-restricted-navigation.md.

// setupCmd is one command that set up a tab's attachment.
type setupCmd struct {
	key    string
	method string
	params jsonv2.Value
}

// setupKey returns the key under which a command sent to a tab's
// attachment is kept for a reattach ("" for one that is not kept), and the
// key of an earlier command it undoes.
func setupKey(method string, params jsonv2.Value, seq int) (key, undoes string) {
	domain, name, _ := strings.Cut(method, ".")
	switch {
	case name == "enable":
		return method, ""
	case name == "disable":
		return "", domain + ".enable"
	case method == "Page.addScriptToEvaluateOnNewDocument" || method == "Page.removeScriptToEvaluateOnNewDocument":
		// Chrome numbers the scripts of an attachment from 1: replaying
		// every add and remove in order gives each the id it had.
		return method + "#" + strconv.Itoa(seq), ""
	case method == "Runtime.addBinding", method == "Runtime.removeBinding":
		var p struct {
			Name string `json:"name"`
		}
		jsonv2.Unmarshal(params, &p, wire.Options)
		if method == "Runtime.removeBinding" {
			return "", "Runtime.addBinding:" + p.Name
		}
		return "Runtime.addBinding:" + p.Name, ""
	case method == "Network.setCookie", method == "Network.setCookies":
		return "", "" // the browser's cookie jar, not the attachment's
	case domain == "Emulation" && strings.HasPrefix(name, "set"),
		domain == "Network" && strings.HasPrefix(name, "set"),
		method == "Page.setLifecycleEventsEnabled", method == "Page.setBypassCSP",
		method == "Page.setInterceptFileChooserDialog", method == "Page.setAdBlockingEnabled",
		method == "Runtime.setAsyncCallStackDepth", method == "Target.setAutoAttach",
		method == "Security.setIgnoreCertificateErrors", method == "Log.startViolationsReport",
		method == "Fetch.enable":
		return method, ""
	}
	return "", ""
}

// noteSetup keeps a command sent to t's own attachment that a reattach
// must send again. Call with r.mu held.
func (t *tab) noteSetup(method string, params jsonv2.Value) {
	t.setupSeq++
	key, undoes := setupKey(method, params, t.setupSeq)
	if undoes != "" {
		t.setup = dropSetup(t.setup, undoes)
	}
	if key == "" {
		return
	}
	t.setup = dropSetup(t.setup, key)
	if len(t.setup) >= maxSetup {
		// A client that floods scripts or bindings must not grow the relay
		// without bound; past this a reattach restores only the first ones.
		return
	}
	t.setup = append(t.setup, setupCmd{key, method, params})
}

// maxSetup bounds the commands kept per tab for a reattach.
const maxSetup = 512

// maxSetupBytes bounds the params of the commands kept per tab for a
// reattach. maxSetup alone let one client's 512 scripts for new documents
// of 8 MiB each hold 4 GiB of the relay's memory for as long as the tab
// lived (TestRedTeamSetupHoldsTheRelaysMemory). Past it a command whose
// params exceed setupSmall is refused (setupRoom), not kept unnoted: a
// script a reattach would silently leave out, or one that shifts the ids
// Chrome gives the scripts after it, is worse for a Playwright or Puppeteer
// script than an addInitScript or exposeFunction that fails and says why.
const maxSetupBytes = 16 << 20

// setupSmall is the size of params kept past maxSetupBytes: maxSetup of
// them at most.
const setupSmall = 4 << 10

// setupRoom returns the error for a command sent to t's own attachment
// that a reattach would send again, and whose params would take the
// tab's kept setup past maxSetupBytes; nil for any other. Call with r.mu
// held.
func (t *tab) setupRoom(method string, params jsonv2.Value) error {
	if len(params) <= setupSmall {
		return nil
	}
	key, _ := setupKey(method, params, t.setupSeq+1)
	if key == "" {
		return nil
	}
	held := 0
	for _, c := range t.setup {
		if c.key != key {
			held += len(c.params)
		}
	}
	if held+len(params) <= maxSetupBytes {
		return nil
	}
	return fmt.Errorf("livetab refuses %s on tab %d: its params (%d KiB) would take what livetab keeps to set the tab up again after a reattach past %d MiB (%d KiB held: scripts for new documents, bindings, settings); remove earlier scripts (Page.removeScriptToEvaluateOnNewDocument) or bindings, or keep scripts small", method, t.id, len(params)>>10, maxSetupBytes>>20, held>>10)
}

func dropSetup(list []setupCmd, key string) []setupCmd {
	out := list[:0]
	for _, c := range list {
		if c.key != key {
			out = append(out, c)
		}
	}
	return out
}

// debuggerReattached runs when the extension attached again to t after
// Chrome ended its session (see above). Call with r.mu held.
func (r *Relay) debuggerReattached(t *tab) {
	if !t.attached {
		return
	}
	r.log.Info("debugger reattached", "tab", t.id)
	r.guardOff(t)        // the new attachment has no Debugger on
	t.runtime.list = nil // Runtime.enable, sent again, lists them anew
	t.doc = docCache{}
	for _, s := range r.sessionsOn(t, nil) {
		s.docGen = 0
	}
	for _, c := range r.children {
		if c.tab == t {
			r.childGone(c)
		}
	}
	setup := append([]setupCmd(nil), t.setup...)
	if t.downloadWatch {
		// The relay's own watch of a popup's downloads, which no client's
		// setup holds (watchPopupDownloads).
		setup = append(setup, setupCmd{method: string(cdproto.CommandPageEnable), params: emptyObject})
		if !slices.ContainsFunc(setup, func(c setupCmd) bool { return c.method == string(cdproto.CommandTargetSetAutoAttach) }) {
			setup = append(setup, setupCmd{method: string(cdproto.CommandTargetSetAutoAttach), params: jsonv2.Value(watchAutoAttach)})
		}
	}
	t.replaying = true
	aborted := t.aborted
	t.aborted = nil
	id := t.id
	r.goWork(clientTimeout, func(ctx context.Context) {
		dom, network := false, false
		for _, c := range setup {
			network = network || c.method == "Network.enable"
			dom = dom || c.method == "DOM.enable"
			var params any
			if len(c.params) > 0 {
				params = c.params
			}
			cctx, cancel := context.WithTimeout(ctx, probeTimeout)
			r.b.Call(cctx, c.method, id, params)
			cancel()
		}
		if dom {
			// Node ids of the old attachment are gone.
			r.toTab(id, cdproto.EventDOMDocumentUpdated, jsonv2.Value(`{}`))
		}
		r.mu.Lock()
		if t := r.tabs[id]; t != nil {
			t.replaying = false
		}
		r.mu.Unlock()
		if aborted != nil && network {
			r.navFailed(id, aborted)
		}
	})
}

// loadSeenAgain runs for a Page.lifecycleEvent on t's own attachment. When
// the lifecycle events come again after a reattach, a "load" of the main
// frame says its document is complete; the relay then tells that the frame
// stopped loading, as a load that ended while no debugger was attached
// would otherwise be waited for forever (chromedp waits for
// Page.frameStoppedLoading or Page.loadEventFired). A client that heard it
// already hears it twice, which a wait for a load takes in its stride. Call
// with r.mu held.
func (r *Relay) loadSeenAgain(t *tab, params jsonv2.Value) {
	if !t.replaying {
		return
	}
	var p struct {
		FrameID string `json:"frameId"`
		Name    string `json:"name"`
	}
	if jsonv2.Unmarshal(params, &p, wire.Options) != nil || p.Name != "load" || p.FrameID != string(t.targetID) {
		return
	}
	t.replaying = false
	stopped, _ := jsonv2.Marshal(map[string]string{"frameId": p.FrameID}, wire.Options)
	for _, s := range t.sessions {
		s.client.deliver(&cdproto.Message{SessionID: s.id, Method: cdproto.EventPageFrameStoppedLoading, Params: stopped})
	}
}

// toTab delivers an event of the relay's own to every session on tab id.
func (r *Relay) toTab(id int64, method cdproto.MethodType, params jsonv2.Value) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.tabs[id]
	if t == nil || !t.attached {
		return
	}
	for _, s := range t.sessions {
		s.client.deliver(&cdproto.Message{SessionID: s.id, Method: method, Params: params})
	}
}

// abortedNav is a main-frame navigation to a scheme Chrome hands to another
// program: its start ended the debugger's session (see above), so the
// events that tell it failed never came.
type abortedNav struct {
	frameID, loaderID, url string
}

// navStarted runs for a Page.frameStartedNavigating on t's own attachment.
// Call with r.mu held.
func (r *Relay) navStarted(t *tab, params jsonv2.Value) {
	var p struct {
		FrameID  string `json:"frameId"`
		LoaderID string `json:"loaderId"`
		URL      string `json:"url"`
	}
	if jsonv2.Unmarshal(params, &p, wire.Options) != nil || p.FrameID != string(t.targetID) {
		return
	}
	t.aborted = nil
	if scheme, _, ok := urlScheme(p.URL); ok && scheme != "about" && !navigateSchemes[scheme] && !browserSchemes[scheme] {
		t.aborted = &abortedNav{p.FrameID, p.LoaderID, p.URL}
	}
}

// navFailed gives the sessions of tab id the events Chrome sends for a
// navigation to a scheme it hands to another program (Network.loadingFailed,
// net::ERR_ABORTED, canceled), when that navigation's start ended the
// debugger's session before they came: a client waiting for the navigation
// would otherwise wait forever. Only with the Network domain on, as Chrome.
func (r *Relay) navFailed(id int64, nav *abortedNav) {
	will, _ := jsonv2.Marshal(map[string]any{
		"requestId": nav.loaderID, "loaderId": nav.loaderID, "documentURL": nav.url,
		"request":   map[string]any{"url": nav.url, "method": "GET", "headers": map[string]string{}, "initialPriority": "VeryHigh", "referrerPolicy": "strict-origin-when-cross-origin"},
		"timestamp": 0, "wallTime": 0, "initiator": map[string]string{"type": "other"},
		"redirectHasExtraInfo": false, "type": "Document", "frameId": nav.frameID, "hasUserGesture": false,
	}, wire.Options)
	failed, _ := jsonv2.Marshal(map[string]any{
		"requestId": nav.loaderID, "timestamp": 0, "type": "Document", "errorText": "net::ERR_ABORTED", "canceled": true,
	}, wire.Options)
	r.toTab(id, cdproto.EventNetworkRequestWillBeSent, will)
	r.toTab(id, cdproto.EventNetworkLoadingFailed, failed)
}
