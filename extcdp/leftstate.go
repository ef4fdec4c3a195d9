package extcdp

import (
	"errors"
	"slices"
	"strings"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/bridge"
	"github.com/livetab/livetab/internal/wire"
)

// State a client leaves on a tab it shared. Chrome keeps one debugger
// session per tab for the extension, so what a client switches on there
// (offline, scripts off, input ignored, paused in the debugger, scripts
// for every new document) holds for the page itself, and the detach that
// clears it comes only when the last client leaves. A client that left a
// tab the person opened while another stayed left the person's tab broken
// for as long as the other stayed (TestRedTeamLeftStateBreaksNoTab). So
// the relay notes, per client and attachment, the commands that change how
// the page works, and when the client has no session left there it sends
// their undoing, unless another client still there did the same.
// docs/decisions/2026-11-23-chrome-debugger-inputs-emulated-or-refused.md.

type undo struct {
	method string
	params string
	// from names fields of the original params that the undoing takes
	// too: they tell one setting of the command from another (a virtual
	// sensor's type), so each is noted and taken back on its own.
	from []string
}

// undoOf maps a command that leaves state on the page to the command that
// takes it back.
var undoOf = map[string]undo{
	"Network.emulateNetworkConditions":            {"Network.emulateNetworkConditions", `{"offline":false,"latency":0,"downloadThroughput":-1,"uploadThroughput":-1}`, nil},
	"Network.setBlockedURLs":                      {"Network.setBlockedURLs", `{"urls":[]}`, nil},
	"Network.setExtraHTTPHeaders":                 {"Network.setExtraHTTPHeaders", `{"headers":{}}`, nil},
	"Network.setCacheDisabled":                    {"Network.setCacheDisabled", `{"cacheDisabled":false}`, nil},
	"Network.setBypassServiceWorker":              {"Network.setBypassServiceWorker", `{"bypass":false}`, nil},
	"Network.setUserAgentOverride":                {"Network.setUserAgentOverride", `{"userAgent":""}`, nil},
	"Emulation.setUserAgentOverride":              {"Emulation.setUserAgentOverride", `{"userAgent":""}`, nil},
	"Emulation.setScriptExecutionDisabled":        {"Emulation.setScriptExecutionDisabled", `{"value":false}`, nil},
	"Emulation.setCPUThrottlingRate":              {"Emulation.setCPUThrottlingRate", `{"rate":1}`, nil},
	"Emulation.setDeviceMetricsOverride":          {"Emulation.clearDeviceMetricsOverride", `{}`, nil},
	"Emulation.setGeolocationOverride":            {"Emulation.clearGeolocationOverride", `{}`, nil},
	"Emulation.setIdleOverride":                   {"Emulation.clearIdleOverride", `{}`, nil},
	"Emulation.setTouchEmulationEnabled":          {"Emulation.setTouchEmulationEnabled", `{"enabled":false}`, nil},
	"Emulation.setEmitTouchEventsForMouse":        {"Emulation.setEmitTouchEventsForMouse", `{"enabled":false}`, nil},
	"Emulation.setEmulatedMedia":                  {"Emulation.setEmulatedMedia", `{"media":"","features":[]}`, nil},
	"Emulation.setFocusEmulationEnabled":          {"Emulation.setFocusEmulationEnabled", `{"enabled":false}`, nil},
	"Emulation.setTimezoneOverride":               {"Emulation.setTimezoneOverride", `{"timezoneId":""}`, nil},
	"Emulation.setLocaleOverride":                 {"Emulation.setLocaleOverride", `{}`, nil},
	"Input.setIgnoreInputEvents":                  {"Input.setIgnoreInputEvents", `{"ignore":false}`, nil},
	"Page.setInterceptFileChooserDialog":          {"Page.setInterceptFileChooserDialog", `{"enabled":false}`, nil},
	"Page.setBypassCSP":                           {"Page.setBypassCSP", `{"enabled":false}`, nil},
	"Page.setWebLifecycleState":                   {"Page.setWebLifecycleState", `{"state":"active"}`, nil},
	"Security.setIgnoreCertificateErrors":         {"Security.setIgnoreCertificateErrors", `{"ignore":false}`, nil},
	"Overlay.setInspectMode":                      {"Overlay.setInspectMode", `{"mode":"none"}`, nil},
	"Debugger.pause":                              {"Debugger.resume", `{}`, nil},
	"Debugger.enable":                             {"Debugger.disable", `{}`, nil},
	"Page.startScreencast":                        {"Page.stopScreencast", `{}`, nil},
	"Animation.setPlaybackRate":                   {"Animation.setPlaybackRate", `{"playbackRate":1}`, nil},
	"Emulation.setDocumentCookieDisabled":         {"Emulation.setDocumentCookieDisabled", `{"disabled":false}`, nil},
	"Emulation.setPageScaleFactor":                {"Emulation.setPageScaleFactor", `{"pageScaleFactor":1}`, nil},
	"Emulation.setAutoDarkModeOverride":           {"Emulation.setAutoDarkModeOverride", `{}`, nil},
	"Emulation.setAutomationOverride":             {"Emulation.setAutomationOverride", `{"enabled":false}`, nil},
	"Emulation.setDefaultBackgroundColorOverride": {"Emulation.setDefaultBackgroundColorOverride", `{}`, nil},
	"Page.setAdBlockingEnabled":                   {"Page.setAdBlockingEnabled", `{"enabled":false}`, nil},
	"Page.setPrerenderingAllowed":                 {"Page.setPrerenderingAllowed", `{"isAllowed":true}`, nil},
	// A virtual authenticator answers the person's passkey prompts with
	// no prompt at all, and what it makes is lost with it; disable removes
	// the client's authenticators.
	"WebAuthn.enable": {"WebAuthn.disable", `{}`, nil},
	// Frames held until a debugger lets them run would wait for good.
	"Target.setAutoAttach": {"Target.setAutoAttach", `{"autoAttach":false,"waitForDebuggerOnStart":false}`, nil},
	// What the person's page reads of the device and the network
	// (TestRedTeamLeftEmulationStaysOnNoTab): each was measured to stay
	// until the detach, and to go with these.
	"Emulation.setDataSaverOverride":                     {"Emulation.setDataSaverOverride", `{}`, nil},
	"Emulation.setNavigatorOverrides":                    {"Emulation.setNavigatorOverrides", `{"platform":""}`, nil},
	"Emulation.setDevicePostureOverride":                 {"Emulation.clearDevicePostureOverride", `{}`, nil},
	"Emulation.setSafeAreaInsetsOverride":                {"Emulation.setSafeAreaInsetsOverride", `{"insets":{}}`, nil},
	"Emulation.setSmallViewportHeightDifferenceOverride": {"Emulation.setSmallViewportHeightDifferenceOverride", `{"difference":0}`, nil},
	// What the person would see drawn on their page
	// (TestRedTeamLeftRenderingShowsOnNoTab): grey or blurred, an FPS
	// meter, layer borders, a banner, a hinge.
	"Emulation.setEmulatedVisionDeficiency": {"Emulation.setEmulatedVisionDeficiency", `{"type":"none"}`, nil},
	"Overlay.setShowFPSCounter":             {"Overlay.setShowFPSCounter", `{"show":false}`, nil},
	"Overlay.setShowDebugBorders":           {"Overlay.setShowDebugBorders", `{"show":false}`, nil},
	"Overlay.setPausedInDebuggerMessage":    {"Overlay.setPausedInDebuggerMessage", `{}`, nil},
	"Overlay.setShowHinge":                  {"Overlay.setShowHinge", `{}`, nil},
	"Emulation.setDisplayFeaturesOverride":  {"Emulation.clearDisplayFeaturesOverride", `{}`, nil},
	"Emulation.setSensorOverrideEnabled":    {"Emulation.setSensorOverrideEnabled", `{"enabled":false}`, []string{"type"}},
	// Chrome has no command that ends overrideNetworkState's override;
	// emulateNetworkConditions without conditions ends it (measured:
	// navigator.onLine reads true again).
	"Network.overrideNetworkState":           {"Network.emulateNetworkConditions", `{"offline":false,"latency":0,"downloadThroughput":-1,"uploadThroughput":-1}`, nil},
	"Network.emulateNetworkConditionsByRule": {"Network.emulateNetworkConditionsByRule", `{"offline":false,"matchedNetworkConditions":[]}`, nil},
	// Third-party cookies limited (or their exceptions off) on the
	// person's page after a reload; the undoing sets all three off, as a
	// session starts (the protocol's defaults). The test browser blocks third-party cookies
	// whatever these say, so only TestLeftStateUndoneWithItsParams shows it.
	"Network.setCookieControls": {"Network.setCookieControls", `{"enableThirdPartyCookieRestriction":false,"disableThirdPartyCookieMetadata":false,"disableThirdPartyCookieHeuristics":false}`, nil},
	// CPU pressure the person's page reads, turned off by its source. A
	// PressureObserver of the person's page had readings after A left where
	// it had none before A came; the test browser's real source follows the
	// machine's load, so only TestLeftStateUndoneWithItsParams checks it.
	"Emulation.setPressureSourceOverrideEnabled": {"Emulation.setPressureSourceOverrideEnabled", `{"enabled":false}`, []string{"source"}},
	"Emulation.setPressureStateOverride":         {"Emulation.setPressureSourceOverrideEnabled", `{"enabled":false}`, []string{"source"}},
	// How the Debugger of a client that stays stops in the person's page:
	// Chrome has one Debugger agent per attachment, so A's pausing on every
	// exception stopped the person's page under B's debugger, and A's
	// skipping, breakpoints off and blackboxing kept B's debugger from
	// stopping at all. (With no client left to keep it on, Debugger.disable
	// clears them all.)
	"Debugger.setPauseOnExceptions":   {"Debugger.setPauseOnExceptions", `{"state":"none"}`, nil},
	"Debugger.setSkipAllPauses":       {"Debugger.setSkipAllPauses", `{"skip":false}`, nil},
	"Debugger.setBreakpointsActive":   {"Debugger.setBreakpointsActive", `{"active":true}`, nil},
	"Debugger.setBlackboxPatterns":    {"Debugger.setBlackboxPatterns", `{"patterns":[]}`, nil},
	"Debugger.setAsyncCallStackDepth": {"Debugger.setAsyncCallStackDepth", `{"maxDepth":0}`, nil},
	// V8 keeps the Runtime's depth apart from the Debugger's: left at
	// 10000, the person's page ran its awaits 5 times slower after A left
	// (TestRedTeamLeftRuntimeAndDragsOnNoTab).
	"Runtime.setAsyncCallStackDepth": {"Runtime.setAsyncCallStackDepth", `{"maxDepth":0}`, nil},
	// The person's console calls captured 100000 frames each, 8 to 33
	// times slower after A left; 200 is V8's own depth.
	"Runtime.setMaxCallStackSizeToCapture": {"Runtime.setMaxCallStackSizeToCapture", `{"size":200}`, nil},
	// The page's devtoolsFormatters were called on each console.log.
	"Runtime.setCustomObjectFormatterEnabled": {"Runtime.setCustomObjectFormatterEnabled", `{"enabled":false}`, nil},
	// Drag and drop on the person's page did nothing after A left: Chrome
	// held every drag for a debugger that would never answer.
	"Input.setInterceptDrags": {"Input.setInterceptDrags", `{"enabled":false}`, nil},
	// The person's page laid out without scrollbars: innerWidth -
	// clientWidth read 0 after A left, 15 before A came.
	"Emulation.setScrollbarsHidden": {"Emulation.setScrollbarsHidden", `{"hidden":false}`, nil},
	// What the person would see drawn over their page: the overlays of
	// DevTools' Elements panel, and a highlighted node or rectangle.
	"Overlay.setShowGridOverlays":           {"Overlay.setShowGridOverlays", `{"gridNodeHighlightConfigs":[]}`, nil},
	"Overlay.setShowFlexOverlays":           {"Overlay.setShowFlexOverlays", `{"flexNodeHighlightConfigs":[]}`, nil},
	"Overlay.setShowScrollSnapOverlays":     {"Overlay.setShowScrollSnapOverlays", `{"scrollSnapHighlightConfigs":[]}`, nil},
	"Overlay.setShowContainerQueryOverlays": {"Overlay.setShowContainerQueryOverlays", `{"containerQueryHighlightConfigs":[]}`, nil},
	"Overlay.setShowIsolatedElements":       {"Overlay.setShowIsolatedElements", `{"isolatedElementHighlightConfigs":[]}`, nil},
	"Overlay.highlightNode":                 {"Overlay.hideHighlight", `{}`, nil},
	"Overlay.highlightRect":                 {"Overlay.hideHighlight", `{}`, nil},
	"Overlay.highlightQuad":                 {"Overlay.hideHighlight", `{}`, nil},
	// Chrome traces once for the whole browser: no client could trace
	// again while the tab stays attached (TestRedTeamLeftTracingBlocksNoOne).
	"Tracing.start": {"Tracing.end", `{}`, nil},
	// Breakpoints of the DOM, of fetches and of events: the person's page
	// stopped at A's under B's debugger after A left
	// (TestRedTeamLeftBreakpointsStopThePersonsPage). Each is taken back by
	// what names it.
	"DOMDebugger.setXHRBreakpoint":                  {"DOMDebugger.removeXHRBreakpoint", `{}`, []string{"url"}},
	"DOMDebugger.setEventListenerBreakpoint":        {"DOMDebugger.removeEventListenerBreakpoint", `{}`, []string{"eventName", "targetName"}},
	"DOMDebugger.setDOMBreakpoint":                  {"DOMDebugger.removeDOMBreakpoint", `{}`, []string{"nodeId", "type"}},
	"DOMDebugger.setInstrumentationBreakpoint":      {"DOMDebugger.removeInstrumentationBreakpoint", `{}`, []string{"eventName"}},
	"EventBreakpoints.setInstrumentationBreakpoint": {"EventBreakpoints.removeInstrumentationBreakpoint", `{}`, []string{"eventName"}},
	// What the person saw on their page after A left, B staying
	// (TestRedTeamLeftSettingsOutsideTheList): a :hover forced on (a menu
	// held open; CSS.disable clears every forced state), no webp image
	// shown, Overlay's debugging boxes drawn over the page.
	"CSS.enable":                           {"CSS.disable", `{}`, nil},
	"CSS.forcePseudoState":                 {"CSS.forcePseudoState", `{"forcedPseudoClasses":[]}`, []string{"nodeId"}},
	"CSS.setLocalFontsEnabled":             {"CSS.setLocalFontsEnabled", `{"enabled":true}`, nil},
	"Emulation.setDisabledImageTypes":      {"Emulation.setDisabledImageTypes", `{"imageTypes":[]}`, nil},
	"Overlay.enable":                       {"Overlay.disable", `{}`, nil},
	"Overlay.setShowScrollBottleneckRects": {"Overlay.setShowScrollBottleneckRects", `{"show":false}`, nil},
	"Overlay.setShowPaintRects":            {"Overlay.setShowPaintRects", `{"result":false}`, nil},
	"Overlay.setShowLayoutShiftRegions":    {"Overlay.setShowLayoutShiftRegions", `{"result":false}`, nil},
	"Overlay.setShowAdHighlights":          {"Overlay.setShowAdHighlights", `{"show":false}`, nil},
	"Overlay.setShowViewportSizeOnResize":  {"Overlay.setShowViewportSizeOnResize", `{"show":false}`, nil},
	"Overlay.setShowWindowControlsOverlay": {"Overlay.setShowWindowControlsOverlay", `{}`, nil},
	// More of the same, after A left with B staying
	// (TestRedTeamLeftUnlistedSettings, red team, 2-9 of 2-9 each): the
	// person's element held in its starting style (unseen) while B's CSS
	// agent stayed on, a popover the page's own hidePopover() did not
	// close, a hint held open, a virtual keyboard and a CPU tier the page
	// read; and A's break on a CSP violation stopped the person's page
	// under B's debugger (TestRedTeamLeftCSPBreakpointStopsThePersonsPage).
	"CSS.forceStartingStyle":                       {"CSS.forceStartingStyle", `{"forced":false}`, []string{"nodeId"}},
	"DOM.forceShowPopover":                         {"DOM.forceShowPopover", `{"enable":false}`, []string{"nodeId"}},
	"DOM.forceShowInterest":                        {"DOM.forceShowInterest", `{"enable":false}`, []string{"nodeId"}},
	"Emulation.setVirtualKeyboardGeometryOverride": {"Emulation.setVirtualKeyboardGeometryOverride", `{}`, nil},
	"Emulation.setCPUPerformanceOverride":          {"Emulation.setCPUPerformanceOverride", `{}`, nil},
	"DOMDebugger.setBreakOnCSPViolation":           {"DOMDebugger.setBreakOnCSPViolation", `{"violationTypes":[]}`, nil},
	// The person's DOM work ran 1.4-1.7 times slower with these left on
	// (red team, one run on a busy machine).
	"DOM.setNodeStackTracesEnabled": {"DOM.setNodeStackTracesEnabled", `{"enable":false}`, nil},
	"Accessibility.enable":          {"Accessibility.disable", `{}`, nil},
}

// byReply maps a command whose setting its reply names to the command that
// takes it back by that name, and the name's field in both.
var byReply = map[string]struct{ method, field string }{
	"Page.addScriptToEvaluateOnNewDocument": {"Page.removeScriptToEvaluateOnNewDocument", "identifier"},
	// A's breakpoints in the person's scripts, kept by the Debugger that
	// B keeps on.
	"Debugger.setBreakpointByUrl":           {"Debugger.removeBreakpoint", "breakpointId"},
	"Debugger.setBreakpoint":                {"Debugger.removeBreakpoint", "breakpointId"},
	"Debugger.setBreakpointOnFunctionCall":  {"Debugger.removeBreakpoint", "breakpointId"},
	"Debugger.setInstrumentationBreakpoint": {"Debugger.removeBreakpoint", "breakpointId"},
}

// named is a setting that its reply named: the command that made it, and
// the name.
type named struct{ method, id string }

// removers are the commands by which a client takes back a setting of
// byReply itself, and the field that names it: the relay forgets it for
// that client, so that its leave does not take back the same setting
// made again by another (Chrome names a breakpoint by its place, the same
// for every client that sets it there).
var removers = map[string]string{
	"Debugger.removeBreakpoint":                "breakpointId",
	"Page.removeScriptToEvaluateOnNewDocument": "identifier",
}

// leftState is what clients set on one attachment: per client, the keys
// of undoOf in the order it first sent them, and the ids of the scripts it
// added.
type leftState map[*Client]*clientState

type clientState struct {
	keys   []string
	params map[string]jsonv2.Value // the last params of each key
	named  []named                 // settings of byReply, in order
}

// noteState notes that c sent method on the attachment of t (sid "" for
// the tab's own) and returns a hook for its reply, nil for a command that
// leaves nothing. The hook keeps what only the reply says (a script's
// identifier), and takes back at once what the command set when c left the
// attachment before the reply came: the command may have reached the tab
// after its leave was taken back (TestRedTeamDiesMidSettingLeavesNothing).
// Call with r.mu held.
func (r *Relay) noteState(c *Client, t *tab, sid, method string, params jsonv2.Value) func(jsonv2.Value) {
	if field, ok := removers[method]; ok {
		r.forgetNamed(c, t, sid, method, field, params)
		return nil
	}
	rep, script := byReply[method]
	if _, ok := undoOf[method]; !ok && !script {
		return nil
	}
	ls := r.leftStateOf(t, sid)
	if ls == nil {
		return nil
	}
	if *ls == nil {
		*ls = leftState{}
	}
	key := ""
	if !script {
		key = stateKey(method, params)
	}
	cs := (*ls)[c]
	if cs == nil {
		cs = &clientState{params: map[string]jsonv2.Value{}}
		if c.ctx.Err() == nil {
			// A client that closed has had its leave taken back, or is
			// about to: what it sends now is the reply hook's to undo.
			(*ls)[c] = cs
		}
	}
	if !script {
		if !slices.Contains(cs.keys, key) {
			cs.keys = append(cs.keys, key)
		}
		cs.params[key] = params
	}
	return func(res jsonv2.Value) {
		var set named
		if script {
			var p map[string]jsonv2.Value
			var id string
			if jsonv2.Unmarshal(res, &p, wire.Options) != nil || jsonv2.Unmarshal(p[rep.field], &id, wire.Options) != nil || id == "" {
				return
			}
			set = named{method, id}
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		ls := r.leftStateOf(t, sid)
		if ls != nil && *ls != nil && (*ls)[c] == cs {
			if script {
				cs.named = append(cs.named, set)
			}
			return
		}
		if ls == nil || !t.attached {
			return // the attachment ended, and what it held with it
		}
		// c left before the reply: take this one command back now, for
		// the clients that stay, as its leave did the rest.
		late := &clientState{params: map[string]jsonv2.Value{}}
		if script {
			late.named = []named{set}
		} else {
			late.keys = []string{key}
			late.params[key] = params
		}
		if *ls == nil {
			*ls = leftState{}
		}
		if now := (*ls)[c]; now != nil {
			// c came back meanwhile: its next leave takes this back too.
			if script {
				now.named = append(now.named, set)
			} else if !slices.Contains(now.keys, key) {
				now.keys = append(now.keys, key)
				now.params[key] = params
			}
			return
		}
		(*ls)[c] = late
		r.undoState(t, sid, *ls, c)
	}
}

// forgetNamed forgets, for c, the setting of byReply that a remover
// command names. Call with r.mu held.
func (r *Relay) forgetNamed(c *Client, t *tab, sid, method, field string, params jsonv2.Value) {
	ls := r.leftStateOf(t, sid)
	if ls == nil || *ls == nil || (*ls)[c] == nil {
		return
	}
	var p map[string]jsonv2.Value
	var id string
	if jsonv2.Unmarshal(params, &p, wire.Options) != nil || jsonv2.Unmarshal(p[field], &id, wire.Options) != nil {
		return
	}
	cs := (*ls)[c]
	cs.named = slices.DeleteFunc(cs.named, func(n named) bool { return n.id == id && byReply[n.method].method == method })
}

// leavesState reports whether method leaves state on the page that a
// client's leave takes back.
func leavesState(method string) bool {
	_, ok := undoOf[method]
	_, byName := byReply[method]
	return ok || byName
}

// stateKey is the key under which a command of undoOf is noted: its
// method, and the values of the fields its undoing takes from it.
func stateKey(method string, params jsonv2.Value) string {
	u := undoOf[method]
	if len(u.from) == 0 {
		return method
	}
	var p map[string]jsonv2.Value
	jsonv2.Unmarshal(params, &p, wire.Options)
	key := method
	for _, f := range u.from {
		// As Chrome reads the value: escapes decoded, and an event
		// listener breakpoint's target "*" when none is named, in any
		// case (another client's breakpoint of the same event, spelt
		// otherwise, was taken back with this one's).
		var v any
		jsonv2.Unmarshal(p[f], &v, wire.Options)
		if method == "DOMDebugger.setEventListenerBreakpoint" && f == "targetName" {
			name, _ := v.(string)
			if name == "" {
				name = "*"
			}
			v = strings.ToLower(name)
		}
		b, _ := jsonv2.Marshal(v, wire.Options)
		key += " " + f + "=" + string(b)
	}
	return key
}

// undoParams are the params of u's command for a setting made with params:
// u's own, and the fields named in u.from taken from params.
func (u undo) undoParams(params jsonv2.Value) string {
	if len(u.from) == 0 {
		return u.params
	}
	var p, out map[string]jsonv2.Value
	jsonv2.Unmarshal(params, &p, wire.Options)
	jsonv2.Unmarshal(jsonv2.Value(u.params), &out, wire.Options)
	for _, f := range u.from {
		if v, ok := p[f]; ok {
			out[f] = v
		}
	}
	b, err := jsonv2.Marshal(out, wire.Options)
	if err != nil {
		return u.params
	}
	return string(b)
}

// leftStateOf is where the state of the attachment sid of t is noted.
// Call with r.mu held.
func (r *Relay) leftStateOf(t *tab, sid string) *leftState {
	if sid == "" {
		return &t.left
	}
	if ch := r.children[sid]; ch != nil && ch.tab == t {
		return &ch.left
	}
	return nil
}

// undoState takes back what c set on the attachment sid of t, now that c
// has left it; what another client still there set too is set again as
// that client last asked. Call with r.mu held.
func (r *Relay) undoState(t *tab, sid string, ls leftState, c *Client) {
	cs := ls[c]
	if cs == nil {
		return
	}
	delete(ls, c)
	send := func(method, params string) {
		if t.attached {
			r.sendOwed(&wire.Frame{Method: method, Params: jsonv2.Value(params), TabID: t.id, SessionID: sid})
		}
	}
	for _, n := range cs.named {
		u := byReply[n.method]
		if heldByOther(ls, c, n) {
			continue
		}
		p, _ := jsonv2.Marshal(map[string]string{u.field: n.id}, wire.Options)
		send(u.method, string(p))
		if sid == "" && u.method == "Page.removeScriptToEvaluateOnNewDocument" {
			// A reattach replays the adds and removes in order.
			t.noteSetup(u.method, p)
		}
	}
	for i := len(cs.keys) - 1; i >= 0; i-- {
		key := cs.keys[i]
		var kept jsonv2.Value
		for o, os := range ls {
			if o != c && slices.Contains(os.keys, key) {
				kept = os.params[key]
				if kept == nil {
					kept = jsonv2.Value(`{}`)
				}
			}
		}
		if kept != nil {
			method, _, _ := strings.Cut(key, " ")
			send(method, string(kept))
			continue
		}
		method, _, _ := strings.Cut(key, " ")
		if key == "Input.setInterceptDrags" {
			// A drag the page began while c intercepted it waits for c's
			// drop: the person's later drags did nothing at all
			// (TestRedTeamLeftRuntimeAndDragsOnNoTab).
			send("Input.dispatchDragEvent", `{"type":"dragCancel","x":0,"y":0,"data":{"items":[],"dragOperationsMask":0}}`)
		}
		if key == "Target.setAutoAttach" && r.watchesFrames(t, sid) {
			// The relay hears of the frames' downloads through its own.
			send(method, watchAutoAttach)
		} else {
			u := undoOf[method]
			send(u.method, u.undoParams(cs.params[key]))
		}
		if sid == "" {
			t.setup = dropSetup(t.setup, method)
		}
		if key == "Target.setAutoAttach" {
			// The frames it already held run.
			for _, ch := range r.children {
				if ch.tab == t {
					r.sendOwed(&wire.Frame{Method: "Runtime.runIfWaitingForDebugger", Params: jsonv2.Value(`{}`), TabID: t.id, SessionID: ch.sid})
				}
			}
		}
	}
}

// heldByOther reports whether a client of ls other than c holds the
// setting n too.
func heldByOther(ls leftState, c *Client, n named) bool {
	for o, os := range ls {
		if o != c && slices.ContainsFunc(os.named, func(m named) bool { return m.id == n.id && byReply[m.method].method == byReply[n.method].method }) {
			return true
		}
	}
	return false
}

// leftTab runs when c's session on t (or on a child of t) ended: once c
// has no session left there, its interception ends and what it set on the
// page is taken back for the clients that stay. Call with r.mu held,
// after the session is gone.
func (r *Relay) leftTab(t *tab, c *Client) {
	if c.hasSessionOn(t) {
		return
	}
	// The relay's own watch of a popup's downloads keeps the debugger
	// there: what c set would outlive c (TestRedTeamLeftStateOnAWatchedPopup).
	others := len(t.sessions) > 0 || r.keepsForDownloads(t)
	for _, ch := range r.children {
		if ch.tab != t {
			continue
		}
		for _, s := range ch.sessions {
			if s.client == c {
				return
			}
			others = true
		}
	}
	r.letGoOfFetch(t, c)
	r.dropBindings(t, c, others)
	if !others {
		// The debugger leaves the tab, and all it set goes with it.
		delete(t.left, c)
		for _, ch := range r.children {
			if ch.tab == t {
				delete(ch.left, c)
			}
		}
		return
	}
	r.undoState(t, "", t.left, c)
	r.releaseOwned(t, c)
	r.guardUses(t, "", c, false)
	for _, ch := range r.children {
		if ch.tab == t {
			r.undoState(t, ch.sid, ch.left, c)
			r.guardUses(t, ch.sid, c, false)
		}
	}
}

// maxOwed bounds the undoings kept for an extension that is away: a few
// per client that left meanwhile.
const maxOwed = 10000

// sendOwed sends f, the undoing of what a client that left set on a tab.
// With no extension to take it, or one that goes away before it answers,
// it goes once the extension is back (reconcile): the debugger outlives a
// stopped worker, and its attachment, kept for the clients that stay, kept
// what the one that left set, its interception of every request included
// (TestRedTeamLeavesWhileWorkerAway). Call with r.mu held.
func (r *Relay) sendOwed(f *wire.Frame) {
	owe := func() {
		if len(r.owed) < maxOwed {
			r.owed = append(r.owed, &wire.Frame{Method: f.Method, Params: f.Params, TabID: f.TabID, SessionID: f.SessionID})
		}
	}
	err := r.b.GoNow(f, func(_ *wire.Frame, err error) {
		if errors.Is(err, bridge.ErrExtensionGone) {
			r.mu.Lock()
			owe()
			r.mu.Unlock()
		}
	})
	if err != nil {
		owe()
	}
}

// payOwed sends the undoings owed to the tabs the extension still holds,
// once it is back. Call with r.mu held.
func (r *Relay) payOwed() {
	owed := r.owed
	r.owed = nil
	for _, f := range owed {
		if t := r.tabs[f.TabID]; t != nil && t.attached {
			r.sendOwed(f)
		}
	}
}
