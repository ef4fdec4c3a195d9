//go:build !unix

package capture

import "io/fs"

// private cannot tell owners here, so a transfer's file is read through
// the relay (Livetab.readTransfer) instead.
func private(fs.FileInfo) bool { return false }
