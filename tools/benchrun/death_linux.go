package main

import (
	"os/exec"
	"syscall"
)

// setDeathSignal has the kernel send cmd SIGTERM when benchrun dies, even
// by SIGKILL.
func setDeathSignal(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
}
