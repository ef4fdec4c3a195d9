package main

import (
	"context"
	"time"

	"github.com/livetab/livetab"
)

// staleEndpoint reports whether the serve an endpoint file names is gone, so
// that a new serve replaces the file without a word. It is gone when the
// file names this serve's own address (we hold that port now: a serve
// killed with -9 left the file, and a probe would only reach ourselves),
// when its process has ended, or when nothing answers there with its token.
func staleEndpoint(ctx context.Context, old, ours livetab.Endpoint) bool {
	if old.PID == ours.PID || old.HTTP == ours.HTTP {
		return true
	}
	if old.PID > 0 && !processAlive(old.PID) {
		return true
	}
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err := livetab.Probe(pctx, old)
	return err != nil
}
