package extcdp

import "time"

// SetBigReadTimeout shortens how long a large message may take to arrive,
// for tests; it returns a function that restores it.
func SetBigReadTimeout(d time.Duration) func() {
	old := bigReadTimeout
	bigReadTimeout = d
	return func() { bigReadTimeout = old }
}

// Counts reports what the relay holds, for leak tests.
func (r *Relay) Counts() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := map[string]int{"sessions": len(r.sessions), "clients": len(r.clients), "tabs": len(r.tabs), "children": len(r.children),
		"downloads": len(r.downloads.byGUID) + len(r.downloads.byChrome)}
	// The finished downloads still held, once per map that holds them.
	for _, dl := range r.downloads.byGUID {
		if dl.done {
			n["downloadsDone"]++
		}
	}
	for _, dl := range r.downloads.byChrome {
		if dl.done {
			n["downloadsDone"]++
		}
	}
	for _, t := range r.tabs {
		n["tabSessions"] += len(t.sessions)
		n["tabSessionsCap"] += cap(t.sessions)
	}
	return n
}

// DataDocument is dataDocument, for its table test.
var DataDocument = dataDocument

// SetupAfter sends the commands (method, params) through a tab's setup
// record and returns the methods a reattach would send again, in order.
func SetupAfter(cmds [][2]string) []string {
	t := &tab{}
	for _, c := range cmds {
		var p []byte
		if c[1] != "" {
			p = []byte(c[1])
		}
		t.noteSetup(c[0], p)
	}
	var out []string
	for _, c := range t.setup {
		out = append(out, c.method+" "+string(c.params))
	}
	return out
}

// CleanName is cleanName, for tests.
var CleanName = cleanName

// HasChromeDownload reports whether the relay holds chrome.downloads' id.
func (r *Relay) HasChromeDownload(id int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.downloads.byChrome[id] != nil
}

// SetSlowCommand sets when an unanswered command gives its slot of the
// window back; it returns a function that restores it.
func SetSlowCommand(d time.Duration) func() {
	old := slowCommand
	slowCommand = d
	return func() { slowCommand = old }
}

// SetTransferTTL shortens how long a transfer's one request is waited for,
// for tests; it returns a function that restores it.
func SetTransferTTL(d time.Duration) func() {
	old := transferTTL
	transferTTL = d
	return func() { transferTTL = old }
}

// Transfers counts the relay's open transfers, for leak tests.
func (r *Relay) Transfers() int {
	r.transfers.mu.Lock()
	defer r.transfers.mu.Unlock()
	return len(r.transfers.byID)
}

// SweepStaleTransfers removes from dir the transfer directories of relays
// that are gone, as the relay does before making its own.
func SweepStaleTransfers(dir string) { sweepStaleTransfers(dir) }

// SetHeldRequestBound changes how long a client may hold a request of the
// person's tab, for tests; it returns a function that restores it.
func SetHeldRequestBound(d time.Duration) func() {
	old := heldRequestBound.Swap(int64(d))
	return func() { heldRequestBound.Store(old) }
}

// SetSyncScriptBound changes how long a client's script may run without
// yielding on the person's tab, for tests; it returns a function that
// restores it.
func SetSyncScriptBound(d time.Duration) func() {
	old := syncScriptBound.Swap(int64(d))
	return func() { syncScriptBound.Store(old) }
}

// ForgetUnsettled empties the relay's count of unsettled
// Livetab.downloadBlob downloads, so that a test that fills it leaves the
// next ones their slots.
func (r *Relay) ForgetUnsettled() {
	r.mu.Lock()
	r.downloads.unsettled = nil
	r.mu.Unlock()
}
