package browsertest

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"time"
)

// heapObjects is the runtime metric of the bytes in live and unswept heap
// objects, HeapAlloc's figure. Unlike runtime.ReadMemStats, reading it does
// not stop the world: sampling every 2 ms with ReadMemStats paused the
// whole process 500 times a second, the relay and the benchmark's own
// test server with it, and so slowed the backend that has more of the
// process busy.
const heapObjects = "/memory/classes/heap/objects:bytes"

// PeakHeap runs f and returns the largest heap in use seen while it ran,
// sampled every 2 ms: benchmarks report it to show a transfer streams
// rather than buffers.
func PeakHeap(f func()) uint64 {
	runtime.GC()
	var peak uint64
	sample := []metrics.Sample{{Name: heapObjects}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 {
				peak = max(peak, sample[0].Value.Uint64())
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	})
	f()
	close(stop)
	wg.Wait()
	return peak
}
