package extcdp

import (
	"os"
	"time"
)

// A tab's own load of a FIFO: the relay refuses a client's Page.navigate
// and Target.createTarget to one (fileurl.go), but a file: page can go
// there itself (a location change, a javascript: URL, a link of Chrome's
// directory listing, a reload after the file was swapped), and the tab
// then answered no debugger, the person's own included, until the person
// navigated it away (red team, 5 ways, 2 of 2 each). The extension tells
// the relay of every file: load in a tab it debugs; if the file is a FIFO,
// the relay, on the same machine, opens it for writing and closes it: the
// browser's open returns and reads an empty file, and the tab answers
// again. Only a FIFO with a reader waiting opens, so nothing is written to
// and no writer is held; a reader of the FIFO other than Chrome sees its
// end of file as well, as it would when any writer leaves.
const (
	// fifoWatch is how long after the load the relay keeps opening the
	// FIFO: Chrome may open it after the relay hears of the load, and
	// more than once.
	fifoWatch = 3 * time.Second
	fifoPoll  = 50 * time.Millisecond
	// maxFIFOWatches bounds the watches at once: a page can start loads
	// faster than they end.
	maxFIFOWatches = 8
)

// onFileLoad looks at the file a tab started to load and, if it is a
// FIFO, frees the tab. It returns at once and needs no lock: the look runs
// in a goroutine of its own, and at most maxFIFOWatches run at once, which
// also bounds the looks left waiting on a file system that does not
// answer.
func (r *Relay) onFileLoad(raw string) {
	path, ok := fileURLPath(raw)
	if !ok {
		return
	}
	select {
	case r.fifos <- struct{}{}:
	default:
		r.log.Warn("a tab's load of a file: URL not looked at: too many at once", "url", raw)
		return
	}
	go func() {
		defer func() { <-r.fifos }()
		fi, err := os.Stat(path)
		if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
			return
		}
		freed := 0
		for end := time.Now().Add(fifoWatch); time.Now().Before(end); time.Sleep(fifoPoll) {
			if unblockFIFO(path) {
				freed++
			}
		}
		if freed > 0 {
			r.log.Warn("a tab loaded a FIFO, which would have held it answering no debugger: opened it for writing and closed it", "path", path, "times", freed)
		}
	}()
}
