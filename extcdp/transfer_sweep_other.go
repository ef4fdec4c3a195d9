//go:build !unix

package extcdp

import "io/fs"

// ownPrivate cannot tell owners here: no directory is swept.
func ownPrivate(fs.FileInfo) bool { return false }

func processAlive(int) bool { return true }
