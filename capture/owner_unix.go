//go:build unix

package capture

import (
	"io/fs"
	"os"
	"syscall"
)

// private says whether only this program's user may open fi: owned by
// the user, with no permission for group or others. A transfer's file
// must be in such a directory, and be such a file, to be one that
// livetab's relay made for this user.
func private(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Uid == uint32(os.Getuid()) && fi.Mode().Perm()&0o077 == 0
}
