package main

import (
	"os/exec"
	"syscall"
)

// dieWithTest makes the kernel send SIGTERM to the serve when the test
// process dies (a panic, a -timeout), so that the serve still ends its
// Chromium instead of leaving both behind.
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
