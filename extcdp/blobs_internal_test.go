package extcdp

import (
	"testing"
	"time"

	"github.com/livetab/livetab/internal/wire"
)

// TestUnsettledDownloadsBound: what counts against maxUnsettled and for how
// long: a download in flight until it ends (at most unsettledAtMost), a
// failed one for unsettledFor; one completed, canceled by a client, or
// never started frees its slot at once.
func TestUnsettledDownloadsBound(t *testing.T) {
	now := time.Unix(1e9, 0)
	var d downloadState
	var dls []*download
	for range maxUnsettled {
		dl := &download{chromeID: 1}
		if _, ok := d.admit(dl, now); !ok {
			t.Fatalf("refused the %d. download of %d", len(dls)+1, maxUnsettled)
		}
		dls = append(dls, dl)
	}
	full := func(at time.Time, want bool, why string) {
		t.Helper()
		wait, ok := d.admit(&download{}, at)
		if ok == want {
			t.Fatalf("%s: admitted %v (wait %v), want %v", why, ok, wait, !want)
		}
		if ok {
			d.unsettled = d.unsettled[:len(d.unsettled)-1]
		} else if wait < time.Second || wait > unsettledFor {
			t.Fatalf("%s: wait %v", why, wait)
		}
	}
	full(now, true, "all in flight")
	full(now.Add(unsettledFor), true, "in flight a minute on")

	dls[0].done, dls[0].info = true, wire.DownloadInfo{State: "interrupted", Error: "NETWORK_FAILED"}
	full(now.Add(time.Second), true, "one failed a second ago")
	full(now.Add(unsettledFor), false, "one failed a minute ago")

	dls[1].done, dls[1].info = true, wire.DownloadInfo{State: "complete"}
	full(now, false, "one completed")
	dls[2].done, dls[2].info = true, wire.DownloadInfo{State: "interrupted", Error: "USER_CANCELED"}
	full(now, false, "one canceled")
	dls[3].done, dls[3].chromeID = true, 0
	full(now, false, "one Chrome never started")

	if _, ok := d.admit(&download{}, now.Add(unsettledAtMost)); !ok {
		t.Fatal("downloads in flight past unsettledAtMost still count")
	}
}
