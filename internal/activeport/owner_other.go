//go:build !linux && !windows

package activeport

import (
	"fmt"
	"syscall"
)

// CheckOwner checks, where the system lets a program see it without
// connecting, that port is held by the Chrome of profile dir. Outside
// Linux it checks only that the process holding the profile lives: a stale
// file whose port another program took is caught on Linux alone.
func CheckOwner(dir string, port int) error {
	pid, err := lockPID(dir)
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
		return fmt.Errorf("%w: the profile's Chrome (pid %d) is gone", ErrNotChrome, pid)
	}
	return nil
}
