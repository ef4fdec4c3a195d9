package extcdp

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
	"github.com/livetab/livetab/livetabcdp"
)

// What the person sees in the popup and what they stop there.
//
// The relay tells the extension (ext.activity) which clients are connected,
// under the names they gave, which tabs each drives, and the last actions:
// runs of commands of one family on one tab, and the tools of livetab mcp
// with the policy's decision. Only the extension hears it: no client learns
// what another does, and the endpoint's status gives no names.
//
// From the popup the person stops a client (ext.stopClient) or a tab
// (ext.detached with reason "stopped"). A stopped client keeps its
// connection, so that its next command reads why it failed, but every
// command fails and it never gets a tab again; an endpoint client is then
// disconnected. A stopped tab is let go of, and the clients that drove it
// read why on their next command there and may not attach to it again.
// Both keep the sessions they hit, as the pause does: a program that only
// saw "target detached" would not know that a person stopped it.

// activityDelay is how long the relay gathers actions before it tells the
// extension: one report for a burst of commands.
const activityDelay = 250 * time.Millisecond

// maxNameLen bounds a client's name, which the client chooses.
const maxNameLen = 60

// activity holds the last actions and schedules the reports.
type activity struct {
	mu        sync.Mutex
	actions   []wire.Action
	scheduled bool
}

// cleanName makes a client's chosen name fit for the popup: printable,
// one line, bounded; def when nothing is left.
func cleanName(name, def string) string {
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == unicode.ReplacementChar || unicode.Is(unicode.Cf, r) {
			return ' '
		}
		return r
	}, name)
	name = strings.Join(strings.Fields(name), " ")
	if r := []rune(name); len(r) > maxNameLen {
		name = string(r[:maxNameLen-1]) + "…"
	}
	if name == "" {
		return def
	}
	return name
}

// SetName sets the name the person sees for the client in the popup, the
// name a program gives at connect (the endpoint's client parameter,
// [Options].ClientName).
func (c *Client) SetName(name string) {
	c.nameMu.Lock()
	c.name = cleanName(name, c.name)
	c.nameMu.Unlock()
	c.r.touchActivity()
}

// family is what the popup says of a command: its domain, or the whole
// method for the few the person wants to see one by one.
func family(m cdproto.MethodType) string {
	switch m {
	case cdproto.CommandPageNavigate, cdproto.CommandTargetCreateTarget, cdproto.CommandTargetAttachToTarget,
		cdproto.CommandTargetCloseTarget, cdproto.CommandTargetActivateTarget, livetabcdp.CommandCloseTab:
		return string(m)
	}
	s := string(m)
	if i := strings.IndexByte(s, '.'); i > 0 {
		s = s[:i]
	}
	if len(s) > maxNameLen {
		// Any client may send any method: the report stays small.
		s = cleanName(s[:maxNameLen+1], "?")
	}
	return s
}

// note records an action of c: a command on tab tabID (0 at the browser
// level), or a tool call with its decision. A run of the same on the same
// tab counts up in one entry.
func (c *Client) note(tabID int64, what, decision string) {
	r := c.r
	now := time.Now().UnixMilli()
	a := &r.act
	a.mu.Lock()
	if n := len(a.actions); n > 0 && decision == "" {
		if l := &a.actions[n-1]; l.Client == c.id && l.TabID == tabID && l.What == what && l.Decision == "" {
			l.Count++
			l.At = now
			a.mu.Unlock()
			r.touchActivity()
			return
		}
	}
	if len(a.actions) == wire.MaxActions {
		a.actions = evictOne(a.actions)
	}
	a.actions = append(a.actions, wire.Action{Client: c.id, Name: c.nameNow(), TabID: tabID, What: what, Decision: decision, Count: 1, At: now})
	a.mu.Unlock()
	r.touchActivity()
}

// evictOne drops the oldest action of the client with the most actions in
// full: a client that floods the list (any client may note anything)
// pushes out its own past, never another's, so the person still sees what
// the quiet ones did.
func evictOne(actions []wire.Action) []wire.Action {
	n := map[string]int{}
	most := ""
	for _, x := range actions {
		n[x.Client]++
		if n[x.Client] > n[most] {
			most = x.Client
		}
	}
	for i, x := range actions {
		if x.Client == most {
			return append(actions[:i], actions[i+1:]...)
		}
	}
	return actions[1:]
}

// nameNow is c's name.
func (c *Client) nameNow() string {
	c.nameMu.Lock()
	defer c.nameMu.Unlock()
	return c.name
}

// noteCommand records a command of c. Browser-level commands count only
// when they open, attach to, show or close a tab: listing targets is not
// something the person needs to see.
func (c *Client) noteCommand(m *cdproto.Message, tabID int64) {
	if tabID == 0 && !needsTab[m.Method] && m.Method != cdproto.CommandTargetCloseTarget ||
		strings.HasPrefix(string(m.Method), livetabcdp.Domain) && m.Method != livetabcdp.CommandCloseTab {
		return // noteAction says itself what it did
	}
	c.note(tabID, family(m.Method), "")
}

// touchActivity schedules a report to the extension.
func (r *Relay) touchActivity() {
	a := &r.act
	a.mu.Lock()
	if a.scheduled {
		a.mu.Unlock()
		return
	}
	a.scheduled = true
	a.mu.Unlock()
	time.AfterFunc(activityDelay, r.reportActivity)
}

// reportActivity tells the extension who drives what, and the last
// actions.
func (r *Relay) reportActivity() {
	r.act.mu.Lock()
	r.act.scheduled = false
	r.act.mu.Unlock()
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	p := wire.ActivityParams{Clients: []wire.ClientActivity{}}
	tabs := map[*Client][]int64{}
	for _, s := range r.sessions {
		if s.tab != nil && s.stopped == "" && s.client != nil && !containsID(tabs[s.client], s.tab.id) {
			tabs[s.client] = append(tabs[s.client], s.tab.id)
		}
	}
	for c := range r.clients {
		if c.stopped {
			continue
		}
		p.Clients = append(p.Clients, wire.ClientActivity{ID: c.id, Name: c.nameNow(), Tabs: append([]int64{}, tabs[c]...), Since: c.since.UnixMilli()})
	}
	r.mu.Unlock()
	r.act.mu.Lock()
	p.Actions = append([]wire.Action{}, r.act.actions...)
	r.act.mu.Unlock()
	params, err := jsonv2.Marshal(p, wire.Options)
	if err != nil {
		return
	}
	r.b.GoNow(&wire.Frame{Method: wire.Activity, Params: params}, func(*wire.Frame, error) {})
}

func containsID(list []int64, id int64) bool {
	for _, x := range list {
		if x == id {
			return true
		}
	}
	return false
}

// refuseStopped answers every command of a client the person stopped,
// and every command on a session of a tab the person stopped; it reports
// whether it did. What a stopped program does to wind down succeeds:
// detaching, closing, disposing of a browser context, listing the (no)
// targets.
func (c *Client) refuseStopped(m *cdproto.Message) bool {
	r := c.r
	r.mu.Lock()
	why, whole := "", c.stopped
	if whole {
		why = wire.StoppedMessage
	} else if s := r.sessions[m.SessionID]; s != nil && s.client == c {
		why = s.stopped
	}
	r.mu.Unlock()
	if why == "" {
		return false
	}
	if whole {
		switch m.Method {
		case cdproto.CommandTargetDetachFromTarget, cdproto.CommandTargetCloseTarget, cdproto.CommandTargetDisposeBrowserContext:
			c.reply(m.ID, m.SessionID, nil)
			return true
		case cdproto.CommandTargetGetTargets:
			// No tab is the stopped client's any more; chromedp lists the
			// targets to see that the one it closed is gone.
			c.reply(m.ID, m.SessionID, noTargets)
			return true
		case cdproto.CommandBrowserClose:
			c.reply(m.ID, m.SessionID, nil)
			if c.OnBrowserClose != nil {
				c.OnBrowserClose()
			}
			return true
		}
	}
	c.fail(m.ID, m.SessionID, -32000, why)
	return true
}

var noTargets = jsonv2.Value(`{"targetInfos":[]}`)

// stopClient stops c for the person: its sessions are let go of, the tabs
// it opened close, and every command it sends from now on fails. Call
// with r.mu held.
func (r *Relay) stopClient(c *Client) {
	if c.stopped {
		return
	}
	c.stopped = true
	r.log.Info("the person stopped a client", "client", c.id, "name", c.nameNow())
	r.buryCreated(c)
	var touched []*tab
	for _, s := range r.sessions {
		if s.client == c && s.stopped == "" && !s.browser {
			r.holdStopped(s, wire.StoppedMessage)
			touched = append(touched, s.tab)
		}
	}
	for _, t := range touched {
		r.releaseIfUnused(t)
	}
	r.closeCreated(c)
	c.note(0, "stopped by you", "")
	if c.onStop != nil {
		go c.onStop()
	}
	r.touchActivity()
}

// holdStopped takes s off its tab, so that it neither holds the debugger
// nor hears the page, and keeps it to answer its commands with why. Call
// with r.mu held.
func (r *Relay) holdStopped(s *session, why string) {
	s.stopped = why
	if s.child != nil {
		s.child.sessions = removeSession(s.child.sessions, s)
	} else if s.tab != nil {
		s.tab.sessions = removeSession(s.tab.sessions, s)
	}
}

// stopTab lets go of t for the person: the extension has detached; the
// clients that drove it read why on their sessions and may not attach to
// it again. Call with r.mu held.
func (r *Relay) stopTab(t *tab) {
	why := fmt.Sprintf("livetab: the person stopped livetab driving tab %d (%s) in the livetab popup; do not use it again unless they ask", t.id, t.info.Title)
	r.log.Info("the person stopped a tab", "tab", t.id)
	stopped := map[*Client]bool{}
	for _, s := range append([]*session(nil), t.sessions...) {
		r.holdStopped(s, why)
		stopped[s.client] = true
	}
	for _, ch := range r.children {
		if ch.tab == t {
			for _, s := range ch.sessions {
				stopped[s.client] = true
			}
		}
	}
	for c := range stopped {
		if c.stoppedTabs == nil {
			c.stoppedTabs = map[int64]bool{}
		}
		c.stoppedTabs[t.id] = true
		c.note(t.id, "stopped by you", "")
	}
	r.debuggerLeft(t)
	r.touchActivity()
}

// personRefusal is why the person does not let c use t, or "". Call with
// r.mu held.
func (c *Client) personRefusal(t *tab) string {
	switch {
	case c.stopped:
		return wire.StoppedMessage
	case c.stoppedTabs[t.id]:
		return fmt.Sprintf("the person stopped livetab driving tab %d in the livetab popup; do not use it again unless they ask", t.id)
	}
	return ""
}

// clientByID finds a connected client by the id the popup knows it by.
// Call with r.mu held.
func (r *Relay) clientByID(id string) *Client {
	for c := range r.clients {
		if c.id == id {
			return c
		}
	}
	return nil
}

func (r *Relay) nextClientID() string {
	r.clientSeq++
	return strconv.FormatInt(r.clientSeq, 10)
}

// stoppedError is the error of a command that was in the page when the
// person stopped its client or its tab: Chrome says only "Detached while
// handling command", and the program should hear why. s is nil for a
// command on a child session by Chrome's id.
func (c *Client) stoppedError(s *session, e *cdproto.Error) *cdproto.Error {
	c.r.mu.Lock()
	why := ""
	switch {
	case c.stopped:
		why = wire.StoppedMessage
	case s != nil:
		why = s.stopped
	}
	c.r.mu.Unlock()
	if why == "" || strings.Contains(e.Message, why) {
		return e
	}
	return &cdproto.Error{Code: e.Code, Message: why + " (" + e.Message + ")"}
}
