//go:build unix

package upload

import (
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// openFlags open a file without waiting on a FIFO or device (a writer that
// never comes would hold the upload where no context reaches) and without
// following a link in place of the file that was checked.
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOFOLLOW

// othersMayChange names a directory on real's path that a user other than
// this one (or root) may change: one they own, or one open to their
// writing without the sticky bit. The browser opens a native upload by its
// path after the check, and such a user could put a link to the person's
// other files in its place. "" when there is none.
func othersMayChange(real string) string {
	self := uint32(os.Getuid())
	theirs := func(st os.FileInfo) bool {
		sys, ok := st.Sys().(*syscall.Stat_t)
		return ok && sys.Uid != self && sys.Uid != 0
	}
	// A group's writing counts unless the group is this user's own (the
	// private group of systems whose umask is 002, where every directory
	// the person makes is 0775).
	others := func(st os.FileInfo) bool {
		perm := st.Mode().Perm()
		if perm&0o002 != 0 {
			return true
		}
		sys, ok := st.Sys().(*syscall.Stat_t)
		return perm&0o020 != 0 && !(ok && ownGroup(sys.Gid))
	}
	child := real
	for dir := filepath.Dir(real); ; dir = filepath.Dir(dir) {
		st, err := os.Stat(dir)
		if err != nil || theirs(st) {
			return dir
		}
		if others(st) {
			if st.Mode()&os.ModeSticky == 0 {
				return dir
			}
			// A sticky directory: others may not move what they do not own.
			if cst, err := os.Lstat(child); err != nil || theirs(cst) {
				return dir
			}
		}
		if dir == filepath.Dir(dir) {
			return ""
		}
		child = dir
	}
}

// ownGroup reports whether gid is this user's private group: the user's
// primary group, named as the user is, with no members listed and no other
// user's primary group (/etc/group, /etc/passwd).
func ownGroup(gid uint32) bool {
	if uint32(os.Getgid()) != gid {
		return false
	}
	u, err := user.Current()
	if err != nil {
		return false
	}
	g, err := user.LookupGroupId(strconv.FormatUint(uint64(gid), 10))
	if err != nil || g.Name != u.Username {
		return false
	}
	id := strconv.FormatUint(uint64(gid), 10)
	alone := func(file string, others func(f []string) bool) bool {
		b, err := os.ReadFile(file)
		if err != nil {
			return false
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			if others(strings.Split(line, ":")) {
				return false
			}
		}
		return true
	}
	return alone("/etc/group", func(f []string) bool { return len(f) >= 4 && f[2] == id && strings.TrimSpace(f[3]) != "" }) &&
		alone("/etc/passwd", func(f []string) bool { return len(f) >= 4 && f[3] == id && f[2] != u.Uid })
}
