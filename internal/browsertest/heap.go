package browsertest

import (
	"runtime"
	"sync"
	"time"
)

// PeakHeap runs f and returns the largest HeapAlloc seen while it ran,
// sampled every 2 ms: benchmarks report it to show a transfer streams
// rather than buffers.
func PeakHeap(f func()) uint64 {
	runtime.GC()
	var peak uint64
	var ms runtime.MemStats
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
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
