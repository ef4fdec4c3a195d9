// Added by livetab's runner (internal/chromedpsuite): chromedp's TestMain is
// renamed, and livetab_main_test.go sets the suite's allocator through these.

package chromedp

import (
	"context"
	"os"
)

// LivetabSetAllocator makes ctx the allocator context of the tests, where
// chromedp's own TestMain would set an ExecAllocator.
func LivetabSetAllocator(ctx context.Context) { allocCtx = ctx }

// LivetabAllocator is the allocator context of the tests. The runner turns
// NewContext(context.Background()...) in the tests and examples into
// NewContext(LivetabAllocator()...), so that they run in livetab too.
func LivetabAllocator() context.Context { return allocCtx }

// LivetabCleanup removes what chromedp's init made, as its TestMain did.
func LivetabCleanup() { os.RemoveAll(allocTempDir) }
