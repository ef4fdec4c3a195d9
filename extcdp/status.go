package extcdp

import (
	"net/http"

	"github.com/livetab/livetab/internal/wire"
)

// Status is a snapshot of the relay, for `livetab status`.
type Status struct {
	Connected bool             `json:"connected"`
	Extension wire.HelloParams `json:"extension"`
	Tabs      []TabStatus      `json:"tabs"`
	Clients   int              `json:"clients"`
	// Paused: the person paused livetab in the extension's popup.
	Paused bool `json:"paused"`
}

// TabStatus describes one tab the relay knows.
type TabStatus struct {
	TabID    int64  `json:"tabId"`
	TargetID string `json:"targetId"`
	URL      string `json:"url"`
	Title    string `json:"title"`
	Attached bool   `json:"attached"`
	Sessions int    `json:"sessions"`
	Created  bool   `json:"createdByLivetab"`
	// Client marks a tab a client opened (or its page did): over the
	// endpoint, whose token every client holds, its target id, URL and
	// title are left out, as everywhere else a client could look.
	Client bool `json:"client,omitempty"`
}

// Status reports whether the extension is connected, which tabs the relay
// knows and which of them have the debugger attached, and how many clients
// are connected.
func (r *Relay) Status() Status {
	st := Status{Connected: r.b.Connected(), Extension: r.b.Hello(), Tabs: []TabStatus{}}
	r.mu.Lock()
	defer r.mu.Unlock()
	st.Clients = len(r.clients)
	st.Paused = r.paused
	for _, t := range r.tabs {
		st.Tabs = append(st.Tabs, TabStatus{
			TabID: t.id, TargetID: string(t.targetID), URL: t.info.URL, Title: t.info.Title,
			Attached: t.attached, Sessions: len(t.sessions), Created: t.created, Client: t.creator != nil,
		})
	}
	return st
}

func (e *endpoint) status(w http.ResponseWriter, req *http.Request) {
	if e.r.b.Connected() {
		e.r.refreshTabs(req.Context())
	}
	st := e.r.Status()
	for i := range st.Tabs {
		if ts := &st.Tabs[i]; ts.Client {
			ts.TargetID, ts.URL, ts.Title = "", "", ""
		}
	}
	writeJSON(w, st)
}
