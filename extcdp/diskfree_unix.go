//go:build linux || darwin

package extcdp

import "syscall"

// diskFree reports the bytes an unprivileged program may still write on
// the filesystem of dir, or -1 when it cannot tell.
func diskFree(dir string) int64 {
	var s syscall.Statfs_t
	if syscall.Statfs(dir, &s) != nil {
		return -1
	}
	return int64(s.Bavail) * int64(s.Bsize)
}
