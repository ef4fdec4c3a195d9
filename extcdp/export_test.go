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
	n := map[string]int{"sessions": len(r.sessions), "clients": len(r.clients), "tabs": len(r.tabs), "children": len(r.children)}
	for _, t := range r.tabs {
		n["tabSessions"] += len(t.sessions)
		n["tabSessionsCap"] += cap(t.sessions)
	}
	return n
}

// DataDocument is dataDocument, for its table test.
var DataDocument = dataDocument

// CleanName is cleanName, for tests.
var CleanName = cleanName
