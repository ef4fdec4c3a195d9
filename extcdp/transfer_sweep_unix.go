//go:build unix

package extcdp

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// ownPrivate says whether fi is this user's with no permission for group
// or others.
func ownPrivate(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Uid == uint32(os.Getuid()) && fi.Mode().Perm()&0o077 == 0
}

// processAlive reports whether a process with id pid exists. Signal 0
// checks without sending anything; EPERM means it exists as another user's.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
