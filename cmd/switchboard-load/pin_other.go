//go:build !linux

package main

import (
	"errors"
	"os/exec"
)

var errNoPin = errors.New("-server-cpus works on Linux only")

func allowedCPUs() ([]int, error) { return nil, errNoPin }

func (s *cpuSplit) pin() error { return errNoPin }

func startOn(*exec.Cmd, []int) error { return errNoPin }
