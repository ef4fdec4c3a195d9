package extcdp

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
)

// What a client gets from a shared attachment is its own. Chrome has one
// attachment per tab, so the remote objects that commands return and the
// streams they open are numbered in one space for every client on the tab:
// B read and released A's object by an id one below its own, read and
// closed A's PDF stream by its small number, and, held to its domains,
// read the stream of a page outside them that A had printed before the tab
// came into them; read the scopes of A's pause, which only A heard of; and
// B's Tracing.end ended A's trace (red team). So on a tab the person
// opened, the only kind two clients can share, the relay notes for each
// client the object ids and stream handles it was given, in replies and
// in events, and a command that names one it was not given, while another
// client was given it or uses the tab, is answered as Chrome answers one
// that names none. An id is read only where Chrome puts one: never inside
// a value a script returned (B returning {objectId: A's} took A's object
// for its own). Object groups are names the clients choose: each client's
// are its own, the relay naming them apart in Chrome (scopeGroup).
// docs/decisions/2026-11-30-a-shared-tabs-objects-and-streams-are-their-clients.md.

// maxOwned bounds the ids the relay notes for one client on one tab: past
// it the client's oldest go, and it can no longer use them while another
// client is on the tab: a client that floods the notes loses only its own.
const maxOwned = 100000

// maxOwners bounds the clients whose notes a tab keeps, those that left
// among them: what A was given stays A's after it left, and B still may
// not name it.
const maxOwners = 64

// ownedIDs are the object ids and stream handles each client was given
// on one tab.
type ownedIDs struct {
	by map[*Client]*idSet
}

type idSet struct {
	has   map[string]bool
	order []string
	// groups are the object groups, as Chrome names them, that the
	// client put objects in on the tab (scopeGroup): its leave releases
	// them (releaseOwned).
	groups map[string]bool
}

func (o *ownedIDs) note(key string, c *Client) {
	set := o.setOf(c)
	if set.has[key] {
		return
	}
	set.has[key] = true
	set.order = append(set.order, key)
	for len(set.order) > maxOwned {
		delete(set.has, set.order[0])
		set.order = set.order[1:]
	}
}

// setOf returns c's notes, made if need be.
func (o *ownedIDs) setOf(c *Client) *idSet {
	if o.by == nil {
		o.by = map[*Client]*idSet{}
	}
	set := o.by[c]
	if set == nil {
		if len(o.by) >= maxOwners {
			// The notes of a client that left go first: what it was
			// given becomes no one's, which only a client alone on the
			// tab may name.
			for o2 := range o.by {
				if o2.isClosed() {
					delete(o.by, o2)
					break
				}
			}
		}
		set = &idSet{has: map[string]bool{}}
		o.by[c] = set
	}
	return set
}

// noteAll notes keys as c's.
func (o *ownedIDs) noteAll(keys []string, c *Client) {
	for _, k := range keys {
		o.note(k, c)
	}
}

// gave reports whether c was given key.
func (o *ownedIDs) gave(key string, c *Client) bool {
	set := o.by[c]
	return set != nil && set.has[key]
}

// another reports whether a client other than c was given key.
func (o *ownedIDs) another(key string, c *Client) bool {
	for o2, set := range o.by {
		if o2 != c && set.has[key] {
			return true
		}
	}
	return false
}

const (
	objectKey = "o:"
	streamKey = "s:"
)

// notesOwned reports whether the relay notes what clients get on t.
func notesOwned(t *tab) bool { return t.creator == nil }

// mayName reports whether c may name key on t: it was given it, or no
// other client was and no other client uses the tab. Call with r.mu held.
func (r *Relay) mayName(t *tab, key string, c *Client) bool {
	if t.owned.gave(key, c) {
		return true
	}
	return !t.owned.another(key, c) && !r.othersOnTab(t, c)
}

// othersOnTab reports whether a client other than c has a session on t or
// on one of its frames. Call with r.mu held.
func (r *Relay) othersOnTab(t *tab, c *Client) bool {
	for _, s := range t.sessions {
		if s.client != c {
			return true
		}
	}
	for _, ch := range r.children {
		if ch.tab == t && slices.ContainsFunc(ch.sessions, func(s *session) bool { return s.client != c }) {
			return true
		}
	}
	return false
}

// refuseOthersIDs fails c's command m on t when it names an object or
// stream c was not given, or ends another's trace, and reports whether it
// did.
func (c *Client) refuseOthersIDs(m *cdproto.Message, t *tab, sid string) bool {
	if !notesOwned(t) {
		return false
	}
	r := c.r
	if field, ok := removers[string(m.Method)]; ok {
		return c.keepOthersNamed(m, t, sid, field)
	}
	switch m.Method {
	case cdproto.CommandIORead, cdproto.CommandIOClose:
		var p struct {
			Handle string `json:"handle"`
		}
		jsonv2.Unmarshal(m.Params, &p, wire.Options)
		if strings.HasPrefix(p.Handle, "blob:") {
			return false // a blob's UUID, which no one guesses
		}
		r.mu.Lock()
		ok := r.mayName(t, streamKey+p.Handle, c)
		r.mu.Unlock()
		if !ok {
			c.fail(m.ID, m.SessionID, -32602, "Invalid stream handle")
			return true
		}
		return false
	case cdproto.CommandTracingEnd:
		r.mu.Lock()
		by := t.trace.by
		theirs := by != nil && by.client != c && slices.Contains(t.sessions, by)
		r.mu.Unlock()
		if theirs {
			c.fail(m.ID, m.SessionID, -32000, "Tracing is not started")
			return true
		}
		return false
	case cdproto.CommandRuntimeQueryObjects:
		// It returns every live object of a prototype, those the
		// inspector keeps for another client's ids among them.
		r.mu.Lock()
		others := r.othersOnTab(t, c)
		r.mu.Unlock()
		if others {
			c.fail(m.ID, m.SessionID, -32000, fmt.Sprintf("livetab refuses Runtime.queryObjects on tab %d while another program uses it: it would hand over the objects livetab keeps for that program; use a tab of your own (Target.createTarget)", t.id))
			return true
		}
		return false
	}
	// A key may come escaped ("object\u0049d"): Chrome reads it all the
	// same.
	if !bytes.Contains(m.Params, []byte(`bjectId"`)) && !bytes.Contains(m.Params, []byte(`\u`)) {
		return false
	}
	var params any
	if jsonv2.Unmarshal(m.Params, &params, wire.Options) != nil {
		return false // Chrome says what is wrong with it
	}
	r.mu.Lock()
	ok := true
	walkObjectIDs(params, func(id string) {
		ok = ok && r.mayName(t, objectKey+id, c)
	})
	r.mu.Unlock()
	if !ok {
		c.fail(m.ID, m.SessionID, -32000, "Could not find object with given id")
	}
	return !ok
}

// walkObjectIDs calls fn with every string under a key "objectId" or one
// that ends in "ObjectId" (promiseObjectId, prototypeObjectId) in v.
func walkObjectIDs(v any, fn func(string)) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && (k == "objectId" || strings.HasSuffix(k, "ObjectId")) {
				fn(s)
				continue
			}
			walkObjectIDs(x, fn)
		}
	case []any:
		for _, x := range v {
			walkObjectIDs(x, fn)
		}
	}
}

// noteOwned returns the hook that notes the object ids and stream handles
// of the reply to m as c's; nil when there is nothing to note. Call with
// r.mu held; the hook takes it.
func (c *Client) noteOwned(m *cdproto.Message, t *tab) func(jsonv2.Value) {
	if !notesOwned(t) || m.Method == cdproto.CommandRuntimeReleaseObject {
		return nil
	}
	r := c.r
	streams := streamResults[m.Method]
	return func(res jsonv2.Value) {
		if streams {
			var p struct {
				Stream   string `json:"stream"`
				Resource struct {
					Stream string `json:"stream"`
				} `json:"resource"` // Network.loadNetworkResource's
			}
			if jsonv2.Unmarshal(res, &p, wire.Options) == nil {
				r.mu.Lock()
				for _, s := range []string{p.Stream, p.Resource.Stream} {
					if s != "" {
						t.owned.note(streamKey+s, c)
					}
				}
				r.mu.Unlock()
			}
		}
		r.mu.Lock()
		r.noteObjects(t, c, res)
		r.mu.Unlock()
	}
}

// streamResults are the commands whose reply names a stream (its
// "stream"), the trace's aside (tracing.go).
var streamResults = map[cdproto.MethodType]bool{
	cdproto.CommandPagePrintToPDF:                     true,
	cdproto.CommandFetchTakeResponseBodyAsStream:      true,
	"Network.takeResponseBodyForInterceptionAsStream": true, // dropped from cdproto, still in Chrome
	cdproto.CommandNetworkLoadNetworkResource:         true,
	// A recording's, which another client read (red team).
	cdproto.CommandPageStartScreenRecording: true,
	cdproto.CommandPageStopScreenRecording:  true,
}

// noteObjects notes the object ids in data, a reply or an event of t, as
// c's. Call with r.mu held.
func (r *Relay) noteObjects(t *tab, c *Client, data jsonv2.Value) {
	t.owned.noteAll(eventObjectIDs(t, data), c)
}

// eventObjectIDs are the keys of the object ids an event of t names, for
// the clients it goes to; nil when the relay notes nothing on t.
func eventObjectIDs(t *tab, params jsonv2.Value) []string {
	if !notesOwned(t) || !bytes.Contains(params, []byte(`"objectId"`)) {
		return nil
	}
	var v any
	if jsonv2.Unmarshal(params, &v, wire.Options) != nil {
		return nil
	}
	var keys []string
	remoteObjectIDs(v, func(id string) { keys = append(keys, objectKey+id) })
	return keys
}

// remoteObjectIDs calls fn with the id of every remote object in v, a
// reply or an event as Chrome sends it. A remote object (it has a
// "type") keeps what a script returned by value in "value" (and
// "deepSerializedValue"): that is the script's JSON, never an id of
// Chrome's, and is not looked into.
func remoteObjectIDs(v any, fn func(string)) {
	switch v := v.(type) {
	case map[string]any:
		_, remote := v["type"]
		for k, x := range v {
			if k == "objectId" {
				if s, ok := x.(string); ok {
					fn(s)
				}
				continue
			}
			if remote && (k == "value" || k == "deepSerializedValue") {
				continue
			}
			remoteObjectIDs(x, fn)
		}
	case []any:
		for _, x := range v {
			remoteObjectIDs(x, fn)
		}
	}
}

// scopeGroup renames the object group m names, on a tab the person
// opened, to c's own: "livetab 3 name" for client 3's "name". Chrome's
// replies never name a group back. A command that makes remote objects
// and names no group has them put in c's default group, "livetab 3":
// Chrome keeps an object of no group until Runtime.releaseObject or the
// debugger's leave, and the debugger stays for the clients that stay, so
// each dead client's handles stayed pinned in the person's page
// (TestRedTeamDeadClientsHandlesPinThePersonsMemory). The groups c used
// are noted, and released when it leaves the tab (releaseOwned).
func (c *Client) scopeGroup(m *cdproto.Message, t *tab) {
	if !notesOwned(t) {
		return
	}
	named := bytes.Contains(m.Params, []byte(`Group"`)) || bytes.Contains(m.Params, []byte(`\u`))
	if !named && !groupMakers[m.Method] {
		return
	}
	p := map[string]jsonv2.Value{}
	if len(m.Params) > 0 && jsonv2.Unmarshal(m.Params, &p, wire.Options) != nil {
		return // Chrome says what is wrong with it
	}
	if p == nil {
		p = map[string]jsonv2.Value{}
	}
	g := defaultGroup(c)
	if raw, ok := p["objectGroup"]; ok {
		var name string
		if jsonv2.Unmarshal(raw, &name, wire.Options) != nil {
			return
		}
		g = "livetab " + c.id + " " + name
	} else if !groupMakers[m.Method] || m.Method == cdproto.CommandRuntimeCallFunctionOn && p["objectId"] != nil {
		// A call on an object puts its result in that object's group.
		return
	}
	r := c.r
	r.mu.Lock()
	set := t.owned.setOf(c)
	if m.Method != cdproto.CommandRuntimeReleaseObjectGroup && !set.groups[g] && len(set.groups) >= maxGroups {
		// A client that makes group after group must not grow the
		// notes: past the bound its new groups are its default one,
		// released with the rest when it leaves.
		g = defaultGroup(c)
	}
	if set.groups == nil {
		set.groups = map[string]bool{}
	}
	if m.Method == cdproto.CommandRuntimeReleaseObjectGroup {
		delete(set.groups, g)
	} else {
		set.groups[g] = true
	}
	r.mu.Unlock()
	p["objectGroup"], _ = jsonv2.Marshal(g, wire.Options)
	if out, err := jsonv2.Marshal(p, wire.Options); err == nil {
		m.Params = out
	}
}

// defaultGroup is the group of c's objects that it put in none; no name c
// chooses is scoped to it ("livetab 3 " + name).
func defaultGroup(c *Client) string { return "livetab " + c.id }

// maxGroups bounds the object groups noted for one client on one tab.
const maxGroups = 1024

// groupMakers are the commands that put the remote objects they make in
// their objectGroup, or in none.
var groupMakers = map[cdproto.MethodType]bool{
	cdproto.CommandRuntimeEvaluate:                     true,
	cdproto.CommandRuntimeCallFunctionOn:               true,
	cdproto.CommandRuntimeRunScript:                    true,
	cdproto.CommandRuntimeQueryObjects:                 true,
	cdproto.CommandDOMResolveNode:                      true,
	cdproto.CommandDebuggerEvaluateOnCallFrame:         true,
	cdproto.CommandHeapProfilerGetObjectByHeapObjectID: true,
}

// releaseOwned lets go of what c was given on t, now that it left the tab
// and other clients stay (leftTab): Chrome keeps a session's remote
// objects and streams until the debugger leaves the tab. It releases each
// of c's object groups, on the tab and on its frames' attachments, and
// closes each stream c was given and no other client was. A group of c's
// holds only objects c's commands made, so no other client's object goes
// with it. Call with r.mu held.
func (r *Relay) releaseOwned(t *tab, c *Client) {
	set := t.owned.by[c]
	if set == nil || !t.attached {
		return
	}
	sids := []string{""}
	for _, ch := range r.children {
		if ch.tab == t {
			sids = append(sids, ch.sid)
		}
	}
	for g := range set.groups {
		params, _ := jsonv2.Marshal(map[string]string{"objectGroup": g}, wire.Options)
		for _, sid := range sids {
			r.sendOwed(&wire.Frame{Method: string(cdproto.CommandRuntimeReleaseObjectGroup), Params: params, TabID: t.id, SessionID: sid})
		}
	}
	set.groups = nil
	// The streams it did not close stay in the browser's memory, a
	// trace's tens of MB among them (TestRedTeamDeadClientsStreamsStay).
	for _, key := range set.order {
		h, ok := strings.CutPrefix(key, streamKey)
		if !ok || t.owned.another(key, c) {
			continue
		}
		params, _ := jsonv2.Marshal(map[string]string{"handle": h}, wire.Options)
		r.sendOwed(&wire.Frame{Method: string(cdproto.CommandIOClose), Params: params, TabID: t.id})
	}
}

// isClosed reports whether c has left.
func (c *Client) isClosed() bool { return c.ctx.Err() != nil }

// keepOthersNamed answers c's removal of a script for new documents or a
// breakpoint that another client on t set and c did not, without sending
// it: Chrome numbers scripts "1", "2"…, and names a breakpoint by its
// place, so B removed A's by guessing (red team). It reports whether it
// answered.
func (c *Client) keepOthersNamed(m *cdproto.Message, t *tab, sid, field string) bool {
	var p map[string]jsonv2.Value
	var id string
	if jsonv2.Unmarshal(m.Params, &p, wire.Options) != nil || jsonv2.Unmarshal(p[field], &id, wire.Options) != nil {
		return false // Chrome says what is wrong with it
	}
	r := c.r
	r.mu.Lock()
	mine, others := false, false
	if ls := r.leftStateOf(t, sid); ls != nil {
		for o, cs := range *ls {
			if slices.ContainsFunc(cs.named, func(n named) bool { return n.id == id && byReply[n.method].method == string(m.Method) }) {
				mine, others = mine || o == c, others || o != c
			}
		}
	}
	r.mu.Unlock()
	if !others || mine {
		return false
	}
	c.reply(m.ID, m.SessionID, nil)
	return true
}
