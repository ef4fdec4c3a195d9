package extcdp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"

	"github.com/livetab/livetab/internal/wire"
	"github.com/livetab/livetab/policy"
)

// A frame of another site is a target of its own (an out-of-process
// iframe), with a session of its own. Its tab is in the client's domains,
// but the frame need not be: an allowed page may embed any site, and a
// client may put such a frame in its own page. The extension lets frames
// load, so that an allowed site's embeds work; through the frame's session
// the client read the document, loaded with the person's cookies, of a
// site its policy keeps it from (TestRedTeamFrameOutsideTheDomains). The
// relay asks Chrome where the frame is before each command on it, as the
// frame navigates without telling chrome.debugger's client.

// frameFree are the commands on a frame outside the domains that read
// nothing of it and that a client needs to leave the frame working: one
// that waits for the debugger, or a request it holds, would stay stuck;
// and those that turn on the events of the frame's life, of which the
// client gets only those (frameEventFree): Playwright waits for a frame's
// Page.lifecycleEvent before it counts its page loaded.
var frameFree = map[cdproto.MethodType]bool{
	cdproto.CommandPageEnable:                     true,
	cdproto.CommandPageSetLifecycleEventsEnabled:  true,
	cdproto.CommandPageGetFrameTree:               true,
	cdproto.CommandRuntimeEnable:                  true,
	cdproto.CommandNetworkEnable:                  true,
	cdproto.CommandTargetSetAutoAttach:            true,
	cdproto.CommandRuntimeRunIfWaitingForDebugger: true,
	cdproto.CommandFetchContinueRequest:           true,
	cdproto.CommandFetchContinueResponse:          true,
	cdproto.CommandFetchContinueWithAuth:          true,
	cdproto.CommandFetchFailRequest:               true,
	cdproto.CommandDebuggerResume:                 true,
}

// frameCheckTimeout bounds the question to Chrome of where a frame is.
const frameCheckTimeout = 5 * time.Second

// refuseFrame fails a command on the frame session sid of tab t when c's
// policy names domains and the frame's document is outside them, and
// reports whether it did.
func (c *Client) refuseFrame(m *cdproto.Message, t *tab, sid string) bool {
	if sid == "" || frameFree[m.Method] || strings.HasSuffix(string(m.Method), ".disable") {
		return false
	}
	domains := c.heldDomains()
	if len(domains) == 0 {
		return false
	}
	ctx, cancel := context.WithTimeout(c.ctx, frameCheckTimeout)
	defer cancel()
	url, err := c.r.frameURL(ctx, t, sid)
	if err != nil {
		c.failErr(m.ID, m.SessionID, fmt.Errorf("livetab policy: %s on a frame of tab %d: could not learn where the frame is, so it is not sent; retry: %w", m.Method, t.id, err))
		return true
	}
	if frameAllowed(url, domains) {
		return false
	}
	c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab policy: %s refused: the frame is at a page outside the domains livetab may use (%s); its page may show where, but this client may not read or drive it", m.Method, strings.Join(domains, ", ")))
	return true
}

// frameAllowed reports whether a frame at url is within domains. A frame
// with no document of a site yet (before its first load, about:, data:)
// holds nothing of one; a blob: URL is its creator's origin's.
func frameAllowed(url string, domains []string) bool {
	if url == "" || strings.HasPrefix(url, "about:") || strings.HasPrefix(url, "data:") {
		return true
	}
	return policy.MatchURL(strings.TrimPrefix(url, "blob:"), domains)
}

// frameURL asks Chrome for the URL of the frame session sid of t.
func (r *Relay) frameURL(ctx context.Context, t *tab, sid string) (string, error) {
	res, err := r.ask(ctx, t, sid, cdproto.CommandTargetGetTargetInfo, emptyObject)
	if err != nil {
		return "", err
	}
	var info target.GetTargetInfoResult
	if err := jsonv2.Unmarshal(res, &info, wire.Options); err != nil || info.TargetInfo == nil {
		return "", fmt.Errorf("no target info of the frame in Chrome's answer: %v", err)
	}
	r.mu.Lock()
	if ch := r.children[sid]; ch != nil {
		ch.info.URL, ch.info.Title = info.TargetInfo.URL, info.TargetInfo.Title
	}
	r.mu.Unlock()
	return info.TargetInfo.URL, nil
}

// ask sends a command of the relay's own to tab t (or its child session
// sid) and returns Chrome's result.
func (r *Relay) ask(ctx context.Context, t *tab, sid string, method cdproto.MethodType, params jsonv2.Value) (jsonv2.Value, error) {
	f := &wire.Frame{Method: string(method), TabID: t.id, SessionID: sid, Params: params}
	done := make(chan *wire.Frame, 1)
	var failed error
	if err := r.b.Go(ctx, f, func(rep *wire.Frame, err error) {
		if err != nil {
			failed = err
			rep = nil
		}
		done <- rep
	}); err != nil {
		return nil, err
	}
	rep := <-done
	if rep == nil {
		return nil, failed
	}
	if rep.Error != nil {
		return nil, errors.New(rep.Error.Message)
	}
	return rep.Result, nil
}

// The frame's events tell the client as much as its commands would: the
// loads of its page (Network), its messages (Runtime, Log), its document
// (DOM, dialogs, screencasts). A client held to domains gets, of a frame
// outside them, only the events that say where the frame is in its life,
// which carry no content of its page: Playwright counts a page loaded when
// each of its frames is (Page.lifecycleEvent), and a paused request, or a
// frame of the frame waiting for the debugger, must be let go. The frame's
// URL comes with the events of its document's load, before the document's
// own.

// frameEventFree are the events of a frame outside the domains still
// delivered.
var frameEventFree = map[cdproto.MethodType]bool{
	cdproto.EventTargetAttachedToTarget:            true,
	cdproto.EventTargetDetachedFromTarget:          true,
	cdproto.EventTargetTargetInfoChanged:           true,
	cdproto.EventFetchRequestPaused:                true,
	cdproto.EventFetchAuthRequired:                 true,
	cdproto.EventInspectorDetached:                 true,
	cdproto.EventInspectorTargetCrashed:            true,
	cdproto.EventInspectorTargetReloadedAfterCrash: true,
	cdproto.EventRuntimeExecutionContextCreated:    true,
	cdproto.EventRuntimeExecutionContextDestroyed:  true,
	cdproto.EventRuntimeExecutionContextsCleared:   true,
	cdproto.EventPageLifecycleEvent:                true,
	cdproto.EventPageFrameAttached:                 true,
	cdproto.EventPageFrameDetached:                 true,
	cdproto.EventPageFrameNavigated:                true,
	cdproto.EventPageNavigatedWithinDocument:       true,
	cdproto.EventPageFrameStartedLoading:           true,
	cdproto.EventPageFrameStoppedLoading:           true,
	cdproto.EventPageFrameStartedNavigating:        true,
	cdproto.EventPageFrameRequestedNavigation:      true,
	cdproto.EventPageDomContentEventFired:          true,
	cdproto.EventPageLoadEventFired:                true,
	cdproto.EventPageDocumentOpened:                true,
}

// noteFrameURL keeps the URL of child ch's document from its events.
// Call with r.mu held.
func noteFrameURL(ch *child, method cdproto.MethodType, params jsonv2.Value) {
	var url string
	switch method {
	case cdproto.EventPageFrameNavigated:
		var p struct {
			Frame struct {
				ID  string `json:"id"`
				URL string `json:"url"`
			} `json:"frame"`
		}
		if jsonv2.Unmarshal(params, &p, wire.Options) != nil || p.Frame.ID != string(ch.targetID) {
			return
		}
		url = p.Frame.URL
	case cdproto.EventNetworkRequestWillBeSent, cdproto.EventNetworkResponseReceived:
		var p struct {
			FrameID   string `json:"frameId"`
			LoaderID  string `json:"loaderId"`
			RequestID string `json:"requestId"`
			Type      string `json:"type"`
			Request   struct {
				URL string `json:"url"`
			} `json:"request"`
			Response struct {
				URL string `json:"url"`
			} `json:"response"`
		}
		if jsonv2.Unmarshal(params, &p, wire.Options) != nil || p.Type != "Document" || p.FrameID != string(ch.targetID) || p.RequestID != p.LoaderID {
			return
		}
		url = p.Request.URL + p.Response.URL
	case cdproto.EventRuntimeExecutionContextCreated:
		var p struct {
			Context struct {
				Origin  string `json:"origin"`
				AuxData struct {
					FrameID   string `json:"frameId"`
					IsDefault bool   `json:"isDefault"`
				} `json:"auxData"`
			} `json:"context"`
		}
		if jsonv2.Unmarshal(params, &p, wire.Options) != nil || !p.Context.AuxData.IsDefault || p.Context.AuxData.FrameID != string(ch.targetID) || p.Context.Origin == "" || p.Context.Origin == "null" {
			return
		}
		url = p.Context.Origin + "/"
	default:
		return
	}
	if url != "" {
		ch.info.URL = url
	}
}

// hearsFrame reports whether c gets event method of child ch. Call with
// r.mu held.
func (c *Client) hearsFrame(ch *child, method cdproto.MethodType) bool {
	if !c.pol.set || len(c.pol.domains) == 0 || frameEventFree[method] {
		return true
	}
	return frameAllowed(ch.info.URL, c.pol.domains)
}

// mainNavigated notes the URL a tab's main frame committed, as Chrome
// reports it on the tab's attachment, and ends the sessions of the clients
// whose domains it leaves. The extension's tab update comes later: a
// history load (the page's history.back(), from the back/forward cache
// without a request no rule holds) had the client read the page outside
// its domains before it (TestRedTeamHistoryLeavesTheDomains). The event
// precedes, on the attachment, the replies of the commands that ran in the
// new document, so they fail. Only when some client enabled Page there.
// Call with r.mu held.
func (r *Relay) mainNavigated(t *tab, params jsonv2.Value) {
	var p struct {
		Frame struct {
			ID       string `json:"id"`
			ParentID string `json:"parentId"`
			URL      string `json:"url"`
			// An error page's URL is Chrome's own; the tab's is the one
			// that failed, as the extension's tab update says.
			UnreachableURL string `json:"unreachableUrl"`
		} `json:"frame"`
	}
	if jsonv2.Unmarshal(params, &p, wire.Options) != nil || p.Frame.ParentID != "" || p.Frame.ID != string(t.targetID) {
		return
	}
	url := p.Frame.URL
	if p.Frame.UnreachableURL != "" {
		url = p.Frame.UnreachableURL
	}
	switch {
	case url == "":
	case url == t.info.URL:
		// Known already (a tab report or refresh came first), but not
		// necessarily acted on for the sessions there now.
		r.enforcePolicies(t)
	default:
		r.moveTo(t, url)
	}
}

// refuseUnwatched makes sure, before the first command of a session of a
// client with domains on a tab, that the relay sees the tab's main-frame
// commits (mainNavigated needs Page on the attachment) and knows where
// the tab is now: a tab the client opened at an allowed URL that
// redirected outside, or whose commit came before anyone enabled Page,
// was read (TestRedTeamNavigateRedirectsOutside). It fails the command
// when the tab is outside the domains, and reports whether it did.
func (c *Client) refuseUnwatched(m *cdproto.Message, t *tab, s *session) bool {
	r := c.r
	r.mu.Lock()
	need := s != nil && s.child == nil && !s.watched && c.pol.set && len(c.pol.domains) > 0
	r.mu.Unlock()
	if !need {
		return false
	}
	ctx, cancel := context.WithTimeout(c.ctx, frameCheckTimeout)
	defer cancel()
	_, err := r.ask(ctx, t, "", cdproto.CommandPageEnable, emptyObject)
	var u string
	if err == nil {
		u, err = r.committedURL(ctx, t)
	}
	if err != nil {
		c.failErr(m.ID, m.SessionID, fmt.Errorf("livetab policy: %s on tab %d: could not learn where the tab is, so it is not sent; retry: %w", m.Method, t.id, err))
		return true
	}
	r.mu.Lock()
	s.watched = true
	if u != "" && u != t.info.URL && !strings.HasPrefix(u, "about:") {
		r.moveTo(t, u)
	}
	why := s.refused
	r.mu.Unlock()
	if why != "" {
		c.fail(m.ID, m.SessionID, -32000, "livetab policy: the session ended: "+why)
		return true
	}
	return false
}

// committedURL asks the tab's renderer which document its main frame has
// committed (Page.getFrameTree), after Page.enable on the same
// attachment: a commit after the answer is told by Page.frameNavigated,
// which comes before the replies of the commands that run in it. The
// browser's view (Target.getTargetInfo) changes only when the renderer's
// word of the commit reaches it: asked in between, it named the allowed
// URL of a tab whose renderer already showed the page that URL
// redirected to outside the domains, and the client read that page
// (TestRedTeamNavigateRedirectsOutside, under load).
func (r *Relay) committedURL(ctx context.Context, t *tab) (string, error) {
	res, err := r.ask(ctx, t, "", cdproto.CommandPageGetFrameTree, emptyObject)
	if err != nil {
		return "", err
	}
	var tree struct {
		FrameTree struct {
			Frame struct {
				URL            string `json:"url"`
				URLFragment    string `json:"urlFragment"`
				UnreachableURL string `json:"unreachableUrl"`
			} `json:"frame"`
		} `json:"frameTree"`
	}
	if err := jsonv2.Unmarshal(res, &tree, wire.Options); err != nil {
		return "", fmt.Errorf("the frame tree in Chrome's answer could not be read: %w", err)
	}
	f := tree.FrameTree.Frame
	if f.UnreachableURL != "" {
		return f.UnreachableURL, nil
	}
	return f.URL + f.URLFragment, nil
}

// Chrome tells of a tab's frames of other sites (attachedToTarget) once
// per attachment: when auto-attach is first turned on, or as each frame
// comes; and of a frame's own frames once, on the frame's session. A
// session that turns auto-attach on after that (the relay's own, to hear
// of the frames' downloads, or another client's came first) heard of no
// frame, and its client could not reach the frames already there
// (TestAutoAttachTellsOfTheFramesAlreadyThere). So the relay tells such a
// session of them, as Chrome would have, after the command's reply.

// toldTo notes that s heard of ch's attach. Call with r.mu held.
func (ch *child) toldTo(s *session) {
	if ch.told == nil {
		ch.told = map[target.SessionID]bool{}
	}
	ch.told[s.id] = true
}

// toldToClient notes that c heard of ch's attach on its parent frame's
// session. Call with r.mu held.
func (ch *child) toldToClient(c *Client) {
	if ch.toldVia == nil {
		ch.toldVia = map[*Client]bool{}
	}
	ch.toldVia[c] = true
}

// tellChildren tells c, which turned auto-attach on in tab t (parent nil)
// or in its frame parent, through its session s or, with s nil, on the
// frame's own session, of the frames there it has not heard attached.
// Call with r.mu held.
func (r *Relay) tellChildren(c *Client, t *tab, parent *child, s *session) {
	if s != nil && r.sessions[s.id] != s || s == nil && (parent == nil || r.children[parent.sid] != parent) {
		return
	}
	parentID, on := t.targetID, target.SessionID("")
	if parent != nil {
		parentID, on = parent.targetID, target.SessionID(parent.sid)
	}
	if s != nil {
		on = s.id
	}
	for _, ch := range r.children {
		if ch.tab != t || ch.info.ParentID != parentID || s != nil && ch.told[s.id] || s == nil && ch.toldVia[c] {
			continue
		}
		if s != nil {
			ch.toldTo(s)
		} else {
			ch.toldToClient(c)
		}
		info := ch.info
		info.Attached = true
		params, _ := jsonv2.Marshal(struct {
			SessionID          string       `json:"sessionId"`
			TargetInfo         *target.Info `json:"targetInfo"`
			WaitingForDebugger bool         `json:"waitingForDebugger"`
		}{ch.sid, &info, false}, wire.Options)
		c.deliver(&cdproto.Message{SessionID: on, Method: cdproto.EventTargetAttachedToTarget, Params: params})
	}
}
