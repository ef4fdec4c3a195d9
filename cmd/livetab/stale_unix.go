//go:build unix

package main

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process with id pid exists. Signal 0
// checks without sending anything; EPERM means it exists as another user's.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
