//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// killGroupOnCancel runs the command in a process group of its own and
// makes a canceled context kill the whole group, so that what the shell
// started dies with it.
func killGroupOnCancel(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
