//go:build !unix

package extension

import "os/exec"

func setProcessGroup(*exec.Cmd) {}

// Without process groups only the main process can be ended; Chromium's
// helpers exit when it does.
func terminateGroup(cmd *exec.Cmd) { cmd.Process.Kill() }

func killGroup(cmd *exec.Cmd) { cmd.Process.Kill() }
