//go:build unix

package extcdp

import "syscall"

// unblockFIFO opens the FIFO at path for writing, without waiting, and
// closes it: a reader blocked in open returns and reads an end of file. It
// reports whether a reader was there (with none the open fails, ENXIO).
func unblockFIFO(path string) bool {
	fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	syscall.Close(fd)
	return true
}
