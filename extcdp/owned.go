package extcdp

import (
	"bytes"
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
// came into them; and B's Tracing.end ended A's trace (red team,
// TestRedTeamSharedTabObjectsAndStreams). So on a tab the person opened,
// the only kind two clients can share, the relay notes whose each object
// id and stream handle is as the replies name them, and a command that
// names another client's is answered as Chrome answers one that names
// none. Objects that events name (a console message's arguments) are every
// client's, as the events are. Object groups are names the clients choose:
// each client's are its own, the relay naming them apart in Chrome
// (scopeGroup), so that B's releaseObjectGroup of A's group releases only
// B's objects, and a name B took first is still A's to use.

// maxOwned bounds what the relay notes of one tab: past it the oldest go,
// and become anyone's.
const maxOwned = 100000

// ownedIDs are the object ids, stream handles and object groups that
// clients got or used on one tab.
type ownedIDs struct {
	by    map[string]*Client
	order []string
}

func (o *ownedIDs) note(key string, c *Client) {
	if o.by == nil {
		o.by = map[string]*Client{}
	}
	if _, ok := o.by[key]; !ok {
		o.order = append(o.order, key)
	}
	o.by[key] = c
	for len(o.order) > maxOwned {
		delete(o.by, o.order[0])
		o.order = o.order[1:]
	}
}

// another reports whether key is noted as a client's other than c.
func (o *ownedIDs) another(key string, c *Client) bool {
	owner, ok := o.by[key]
	return ok && owner != c
}

const (
	objectKey = "o:"
	streamKey = "s:"
)

// notesOwned reports whether the relay notes what c gets on t.
func notesOwned(t *tab) bool { return t.creator == nil }

// refuseOthersIDs fails c's command m on t when it names an object or
// stream of another client's, or ends another's trace, and reports whether
// it did.
func (c *Client) refuseOthersIDs(m *cdproto.Message, t *tab) bool {
	if !notesOwned(t) {
		return false
	}
	r := c.r
	switch m.Method {
	case cdproto.CommandIORead, cdproto.CommandIOClose:
		var p struct {
			Handle string `json:"handle"`
		}
		jsonv2.Unmarshal(m.Params, &p, wire.Options)
		r.mu.Lock()
		theirs := t.owned.another(streamKey+p.Handle, c)
		r.mu.Unlock()
		if theirs {
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
	}
	// A key may come escaped ("object\u0049d"): Chrome reads it all the
	// same.
	if !bytes.Contains(m.Params, []byte(`bjectId"`)) && !bytes.Contains(m.Params, []byte(`\u`)) {
		return false
	}
	var params any
	if jsonv2.Unmarshal(m.Params, &params, wire.Options) != nil {
		return false
	}
	r.mu.Lock()
	theirs := false
	walkObjectIDs(params, func(id string) {
		theirs = theirs || t.owned.another(objectKey+id, c)
	})
	r.mu.Unlock()
	if theirs {
		c.fail(m.ID, m.SessionID, -32000, "Could not find object with given id")
	}
	return theirs
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
	if !notesOwned(t) {
		return nil
	}
	if m.Method == cdproto.CommandRuntimeReleaseObject {
		return nil
	}
	r := c.r
	return func(res jsonv2.Value) {
		if !bytes.Contains(res, []byte(`"objectId":"`)) && !bytes.Contains(res, []byte(`"stream":"`)) {
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		eachString(res, `"objectId":"`, func(id string) { t.owned.note(objectKey+id, c) })
		eachString(res, `"stream":"`, func(h string) { t.owned.note(streamKey+h, c) })
	}
}

// eachString calls fn with the string after each prefix in data: ids and
// handles are plain, never escaped.
func eachString(data []byte, prefix string, fn func(string)) {
	for {
		i := bytes.Index(data, []byte(prefix))
		if i < 0 {
			return
		}
		data = data[i+len(prefix):]
		j := bytes.IndexByte(data, '"')
		if j < 0 {
			return
		}
		if !bytes.ContainsRune(data[:j], '\\') {
			fn(string(data[:j]))
		}
		data = data[j+1:]
	}
}

// scopeGroup renames the object group m names, on a tab the person
// opened, to c's own: "livetab 3 name" for client 3's "name". Chrome's
// replies never name a group back.
func (c *Client) scopeGroup(m *cdproto.Message, t *tab) {
	if !notesOwned(t) || !bytes.Contains(m.Params, []byte(`Group"`)) && !bytes.Contains(m.Params, []byte(`\u`)) {
		return
	}
	p := map[string]jsonv2.Value{}
	if jsonv2.Unmarshal(m.Params, &p, wire.Options) != nil {
		return // Chrome says what is wrong with it
	}
	var g string
	if jsonv2.Unmarshal(p["objectGroup"], &g, wire.Options) != nil {
		return
	}
	p["objectGroup"], _ = jsonv2.Marshal("livetab "+c.id+" "+g, wire.Options)
	if out, err := jsonv2.Marshal(p, wire.Options); err == nil {
		m.Params = out
	}
}
