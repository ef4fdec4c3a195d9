// Package connlimit bounds what the plain HTTP connections of livetab's
// loopback servers may cost. Any program on the machine may connect to
// them without a token; each connection is a goroutine, buffers and a
// file descriptor, and past the descriptor limit the server accepts no
// one, not the extension, not an honest client.
package connlimit

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// Defaults for Bound: what a CDP client or the extension needs (one
// request for /json/version, then a WebSocket), with room.
const (
	// MaxConns is how many connections that are not WebSockets may be
	// open at once.
	MaxConns = 512
	// IdleTimeout closes a keep-alive connection that asks nothing more.
	IdleTimeout = 30 * time.Second
	// HeaderTimeout bounds a request's headers.
	HeaderTimeout = 10 * time.Second
	// MaxHeaderBytes bounds a request's headers: the token rides in the
	// URL, nothing needs more.
	MaxHeaderBytes = 64 << 10
)

// Bound sets srv's timeouts and header limit and keeps at most max of its
// connections open, WebSockets (hijacked) aside: past max, a new
// connection closes the oldest idle one, else the oldest whose handler
// returned, else the oldest that has not sent its headers yet.
// Connections in a handler are never closed. What the server does after a
// handler returns (read the rest of an unread body, send the reply) has
// HeaderTimeout. Call after srv.Handler is set, before srv serves.
func Bound(srv *http.Server, max int) {
	srv.ReadHeaderTimeout = HeaderTimeout
	srv.IdleTimeout = IdleTimeout
	srv.MaxHeaderBytes = MaxHeaderBytes
	l := &limit{max: max, state: map[net.Conn]*conn{}}
	bound(srv, l)
	prev := srv.ConnState
	srv.ConnState = func(c net.Conn, st http.ConnState) {
		l.track(c, st)
		if prev != nil {
			prev(c, st)
		}
	}
}

type connKey struct{}

// afterHandler bounds what the server does once a handler returned
// (bound); a variable for the tests.
var afterHandler = HeaderTimeout

// bound wraps srv's handler. A handler that refuses a request (a program
// without the token) returns without reading its body, and the server
// then reads what is left of it, up to 256 KiB, before it replies; with
// no deadline, a program that sends headers announcing a body and never
// the body held each connection for good, and past max every new
// connection was let in: thousands of connections, 20 KiB each. A client
// that never reads its replies held the reply's write the same way. The
// deadlines are set as the handler returns, so that a handler's own long
// read or write (the transfer channel's posts) is not cut, and the write
// deadline is lifted as the next request on the connection begins.
func bound(srv *http.Server, l *limit) {
	h := srv.Handler
	if h == nil {
		h = http.DefaultServeMux
	}
	prevCtx := srv.ConnContext
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if prevCtx != nil {
			ctx = prevCtx(ctx, c)
		}
		return context.WithValue(ctx, connKey{}, c)
	}
	srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := r.Context().Value(connKey{}).(net.Conn)
		if c != nil {
			c.SetWriteDeadline(time.Time{})
		}
		h.ServeHTTP(w, r)
		if c != nil && l.finished(c) {
			d := time.Now().Add(afterHandler)
			c.SetReadDeadline(d)
			c.SetWriteDeadline(d)
		}
	})
}

// finished notes that c's handler returned, and reports whether c is
// still the server's: not hijacked (a WebSocket's deadlines are its own)
// nor closed. What is left of such a request (an unread body, the
// reply's write) may be cut for a new connection: a program that sent
// bodies it never finished otherwise held thousands of connections at
// once, past the bound, for the deadline's 10 s each
// (TestRedTeamUnsentBodiesPeakPastMax).
func (l *limit) finished(c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.state[c]
	if e == nil {
		return false
	}
	l.seq++
	e.done, e.since = true, l.seq
	return true
}

type conn struct {
	c     net.Conn
	state http.ConnState
	done  bool   // active, but its handler returned (finished)
	since uint64 // order of the last change of state
}

type limit struct {
	mu    sync.Mutex
	max   int
	seq   uint64
	state map[net.Conn]*conn
}

func (l *limit) track(c net.Conn, st http.ConnState) {
	l.mu.Lock()
	var evict net.Conn
	switch st {
	case http.StateHijacked, http.StateClosed:
		delete(l.state, c)
	default:
		l.seq++
		e := l.state[c]
		if e == nil {
			e = &conn{c: c}
			l.state[c] = e
		}
		e.state, e.since, e.done = st, l.seq, false
		if st == http.StateNew && len(l.state) > l.max {
			evict = l.victim(c)
		}
	}
	l.mu.Unlock()
	if evict != nil {
		evict.Close()
	}
}

// victim is the oldest idle connection, else the oldest one whose
// handler returned, else the oldest one still without its headers other
// than c.
func (l *limit) victim(c net.Conn) net.Conn {
	var idle, done, fresh *conn
	for _, e := range l.state {
		switch {
		case e.state == http.StateIdle && (idle == nil || e.since < idle.since):
			idle = e
		case e.state == http.StateActive && e.done && (done == nil || e.since < done.since):
			done = e
		case e.state == http.StateNew && e.c != c && (fresh == nil || e.since < fresh.since):
			fresh = e
		}
	}
	if idle == nil {
		idle = done
	}
	if idle == nil {
		idle = fresh
	}
	if idle == nil {
		return nil
	}
	delete(l.state, idle.c)
	return idle.c
}
