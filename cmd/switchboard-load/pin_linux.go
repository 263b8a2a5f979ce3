package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// allowedCPUs returns the CPUs this process may run on, in order.
func allowedCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("read this process's CPUs: %w", err)
	}
	var cpus []int
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

func cpuSet(cpus []int) *unix.CPUSet {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	return &set
}

// pin keeps this process on the tool's CPUs: every thread it has now
// (threads made later inherit their maker's CPUs) and GOMAXPROCS.
func (s *cpuSplit) pin() error {
	set := cpuSet(s.tool)
	// A thread started while the list is read may have copied an old
	// mask: go over the list until a pass finds nothing to change.
	for pass := 0; pass < 10; pass++ {
		tids, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return fmt.Errorf("list this process's threads: %w", err)
		}
		changed := false
		for _, e := range tids {
			tid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			var now unix.CPUSet
			if unix.SchedGetaffinity(tid, &now) == nil && now == *set {
				continue
			}
			if err := unix.SchedSetaffinity(tid, set); err != nil && err != unix.ESRCH {
				return fmt.Errorf("pin thread %d: %w", tid, err)
			}
			changed = true
		}
		if !changed {
			runtime.GOMAXPROCS(len(s.tool))
			return nil
		}
	}
	return fmt.Errorf("pin this process: its threads kept changing")
}

// startOn starts cmd on the CPUs server: the child takes the CPUs of the
// thread that forks it, which is this one, locked and moved there for the
// fork and back after.
func startOn(cmd *exec.Cmd, server []int) error {
	runtime.LockOSThread()
	var was unix.CPUSet
	if err := unix.SchedGetaffinity(0, &was); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("read this thread's CPUs: %w", err)
	}
	if err := unix.SchedSetaffinity(0, cpuSet(server)); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("move to the servers' CPUs: %w", err)
	}
	err := cmd.Start()
	if perr := unix.SchedSetaffinity(0, &was); perr != nil {
		// The thread stays locked to this goroutine, so that it ends
		// with it rather than run other goroutines on the servers' CPUs.
		return fmt.Errorf("move back from the servers' CPUs: %w", perr)
	}
	runtime.UnlockOSThread()
	return err
}
