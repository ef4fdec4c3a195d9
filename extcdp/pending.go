package extcdp

import (
	"context"
	"sync"
)

// What the endpoint has read from clients and not yet handed on to the
// extension (docs/decisions/2026-11-23-bounded-clients.md). A message waits
// in its lane until the commands before it went out, and a message just
// under the large-message size waits for no turn: one client with 1024
// commands of 1 MiB on one session held 843 MiB of serve's heap. Past a
// budget the endpoint reads no more from that client (or, past the total
// one, from any) until messages went on their way: TCP pushes back on the
// senders.
const (
	maxPendingPerClient = 16 << 20
	maxPendingTotal     = 64 << 20
)

// budget counts bytes against a limit; wait blocks while it is spent.
type budget struct {
	mu   sync.Mutex
	used int64
	max  int64
	wake chan struct{} // closed and replaced whenever bytes come back
}

func newBudget(max int64) *budget { return &budget{max: max, wake: make(chan struct{})} }

func (b *budget) add(n int64) {
	b.mu.Lock()
	b.used += n
	if n < 0 {
		close(b.wake)
		b.wake = make(chan struct{})
	}
	b.mu.Unlock()
}

// wait returns once the budget is not spent (one message may overshoot
// it), or when ctx ends.
func (b *budget) wait(ctx context.Context) error {
	for {
		b.mu.Lock()
		if b.used < b.max {
			b.mu.Unlock()
			return nil
		}
		w := b.wake
		b.mu.Unlock()
		select {
		case <-w:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
