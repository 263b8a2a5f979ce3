//go:build !unix

package main

import "os/exec"

// killGroupOnCancel leaves the default: a canceled context kills the
// command itself (there are no process groups to kill here).
func killGroupOnCancel(cmd *exec.Cmd) {}
