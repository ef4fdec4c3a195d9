//go:build !(linux || darwin)

package extcdp

// diskFree cannot tell here: transfers are bounded by maxTransferBytes alone.
func diskFree(string) int64 { return -1 }
