package extension

import "syscall"

// parentDeathSignal makes a browser we launched die with the program that
// launched it, even one killed with SIGKILL: its own process group would
// otherwise keep it running.
func parentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
