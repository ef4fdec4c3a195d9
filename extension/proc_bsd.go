//go:build unix && !linux

package extension

import "syscall"

func parentDeathSignal(*syscall.SysProcAttr) {}
