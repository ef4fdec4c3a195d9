package extcdp

import (
	"bytes"
	"regexp"
	"slices"
	"strconv"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/livetab/livetab/internal/wire"
)

// A trace through chrome.debugger holds the tab's renderer only: none of
// the browser process's events, among them TracingStartedInBrowser, which
// names the page's main frame, its URL and its process. Without it the
// DevTools trace engine (DevTools' Performance panel, chrome-devtools-mcp's
// performance_start_trace, Lighthouse) finds no page and no navigation in
// the trace: no LCP, no insights, "URL: " (measured with chrome-devtools-mcp
// 1.11 through the endpoint). The relay adds that one event, made from what
// it knows of the tab, to the trace the client reads: in the first
// Tracing.dataCollected, or in the first IO.read of the trace's stream.
//
// The Tracing events of an attachment go to the session that started the
// trace, not to every client on the tab: another client did not ask for
// them, and its own Tracing.start would be refused while this one runs.

// traceState is a tab's trace in progress and its streams not yet read.
type traceState struct {
	by      *session // the session whose Tracing.start runs; nil for none
	meta    traceMeta
	pending map[string]traceMeta // stream handle → the start it belongs to
	sent    bool                 // the event went out in a dataCollected
}

// traceMeta is what TracingStartedInBrowser says of the traced page.
type traceMeta struct {
	frame, url string
}

// onTracingEvent routes a Tracing event of t's own attachment to the
// session that traces, and adds the missing event. Call with r.mu held.
func (r *Relay) onTracingEvent(t *tab, method cdproto.MethodType, params jsonv2.Value) {
	ts := &t.trace
	s := ts.by
	var gone *Client
	if s != nil && !slices.Contains(t.sessions, s) {
		// It left; Tracing.end was its undo. ts.by stays until the
		// trace completes, to tell whose its stream was.
		s, gone = nil, s.client
	}
	switch method {
	case cdproto.EventTracingDataCollected:
		if s != nil && !ts.sent {
			var p struct {
				Value []jsonv2.Value `json:"value"`
			}
			if jsonv2.Unmarshal(params, &p, wire.Options) == nil && len(p.Value) > 0 {
				var all bytes.Buffer
				for _, v := range p.Value {
					all.Write(v)
				}
				if ev := startedInBrowser(ts.meta, all.Bytes()); ev != nil {
					p.Value = append([]jsonv2.Value{ev}, p.Value...)
					if out, err := jsonv2.Marshal(p, wire.Options); err == nil {
						params, ts.sent = out, true
					}
				}
			}
		}
	case cdproto.EventTracingTracingComplete:
		var p struct {
			Stream string `json:"stream"`
		}
		if s != nil && jsonv2.Unmarshal(params, &p, wire.Options) == nil && p.Stream != "" && notesOwned(t) {
			t.owned.note(streamKey+p.Stream, s.client)
		}
		if gone != nil && jsonv2.Unmarshal(params, &p, wire.Options) == nil && p.Stream != "" && t.attached {
			// The trace of a tracer that left, which its leave's
			// Tracing.end completed: no one is left to read it. Noted
			// as the tracer's, so that no other client names it before
			// it is closed (another client read it, red team:
			// TestRedTeamDeadClientsTraceReadByAnother), and closed at
			// once: Chrome keeps a stream until IO.close or the
			// debugger's leave, however long another client stays.
			if notesOwned(t) {
				t.owned.note(streamKey+p.Stream, gone)
			}
			closed, _ := jsonv2.Marshal(map[string]string{"handle": p.Stream}, wire.Options)
			r.sendOwed(&wire.Frame{Method: string(cdproto.CommandIOClose), Params: closed, TabID: t.id})
		}
		if s != nil && !ts.sent && jsonv2.Unmarshal(params, &p, wire.Options) == nil && p.Stream != "" {
			if ts.pending == nil {
				ts.pending = map[string]traceMeta{}
			}
			if len(ts.pending) < 16 {
				ts.pending[p.Stream] = ts.meta
			}
		}
		ts.by, ts.sent = nil, false
	}
	if s != nil {
		s.client.deliver(&cdproto.Message{SessionID: s.id, Method: method, Params: params})
	}
}

// noteTrace returns what to do with the result of a traced tab's
// Tracing.start or IO.read on its own attachment, or nil. Call with r.mu
// held; the hook takes it.
func (r *Relay) noteTrace(t *tab, sid string, s *session, method cdproto.MethodType, params jsonv2.Value) func(jsonv2.Value) jsonv2.Value {
	if sid != "" || s == nil {
		return nil
	}
	switch method {
	case cdproto.CommandTracingStart:
		meta := traceMeta{frame: string(t.targetID), url: t.info.URL}
		return func(res jsonv2.Value) jsonv2.Value {
			r.mu.Lock()
			t.trace.by, t.trace.meta, t.trace.sent = s, meta, false
			r.mu.Unlock()
			return res
		}
	case cdproto.CommandIORead, cdproto.CommandIOClose:
		var p struct {
			Handle string `json:"handle"`
		}
		if jsonv2.Unmarshal(params, &p, wire.Options) != nil {
			return nil
		}
		meta, ok := t.trace.pending[p.Handle]
		if !ok {
			return nil
		}
		if method == cdproto.CommandIOClose {
			delete(t.trace.pending, p.Handle)
			return nil
		}
		return func(res jsonv2.Value) jsonv2.Value {
			r.mu.Lock()
			_, still := t.trace.pending[p.Handle]
			delete(t.trace.pending, p.Handle)
			r.mu.Unlock()
			if !still {
				return res
			}
			return withStartedInBrowser(res, meta)
		}
	}
	return nil
}

// withStartedInBrowser adds the event to the first IO.read of a trace: the
// data begins `{"traceEvents":[` (or `[`). Compressed data is left as is.
func withStartedInBrowser(res jsonv2.Value, meta traceMeta) jsonv2.Value {
	var p struct {
		Data          string `json:"data"`
		EOF           bool   `json:"eof"`
		Base64Encoded bool   `json:"base64Encoded,omitzero"`
	}
	if jsonv2.Unmarshal(res, &p, wire.Options) != nil || p.Base64Encoded {
		return res
	}
	at := openingRE.FindStringIndex(p.Data)
	if at == nil {
		return res
	}
	ev := startedInBrowser(meta, []byte(p.Data))
	if ev == nil {
		return res
	}
	sep := ","
	if rest := bytes.TrimLeft([]byte(p.Data[at[1]:]), " \n\r\t"); len(rest) > 0 && rest[0] == ']' {
		sep = ""
	}
	p.Data = p.Data[:at[1]] + string(ev) + sep + p.Data[at[1]:]
	out, err := jsonv2.Marshal(p, wire.Options)
	if err != nil {
		return res
	}
	return out
}

var (
	openingRE = regexp.MustCompile(`^\s*(\{\s*"traceEvents"\s*:\s*)?\[`)
	pidRE     = regexp.MustCompile(`"pid"\s*:\s*(\d+)`)
	tidRE     = regexp.MustCompile(`"tid"\s*:\s*(\d+)`)
	tsRE      = regexp.MustCompile(`"ts"\s*:\s*(\d+)`)
)

// startedInBrowser is the TracingStartedInBrowser event of a trace whose
// first events are in data: the renderer's process is theirs, and its time
// just before the earliest of theirs. nil when data names no process.
func startedInBrowser(meta traceMeta, data []byte) jsonv2.Value {
	// The renderer's process is the one most of the events are of (a
	// metadata event may carry pid 0).
	count := map[int64]int{}
	var pid int64
	for _, m := range pidRE.FindAllSubmatch(data, -1) {
		if v, err := strconv.ParseInt(string(m[1]), 10, 64); err == nil && v > 0 {
			count[v]++
			if count[v] > count[pid] {
				pid = v
			}
		}
	}
	if pid == 0 {
		return nil
	}
	var tid int64
	if m := tidRE.FindSubmatch(data); m != nil {
		tid, _ = strconv.ParseInt(string(m[1]), 10, 64)
	}
	var first int64
	for _, m := range tsRE.FindAllSubmatch(data, -1) {
		if v, err := strconv.ParseInt(string(m[1]), 10, 64); err == nil && v > 0 && (first == 0 || v < first) {
			first = v
		}
	}
	if first == 0 {
		return nil
	}
	ev := map[string]any{
		"name": "TracingStartedInBrowser", "cat": "disabled-by-default-devtools.timeline", "ph": "I", "s": "t",
		"pid": pid, "tid": tid, "ts": first - 1, "tts": 0,
		"args": map[string]any{"data": map[string]any{
			"frameTreeNodeId": 1, "persistentIds": true,
			"frames": []map[string]any{{
				"frame": meta.frame, "url": meta.url, "name": "", "processId": pid,
				"isOutermostMainFrame": true, "isInPrimaryMainFrame": true,
			}},
		}},
	}
	out, err := jsonv2.Marshal(ev, wire.Options)
	if err != nil {
		return nil // the trace goes out as Chrome made it
	}
	return out
}
