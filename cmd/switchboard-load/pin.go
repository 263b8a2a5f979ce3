package main

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// cpuSplit puts the servers this tool starts on CPUs of their own
// (-server-cpus), as a gateway on a machine of its own would be, and this
// tool (its peers, its agents and the reference upstream) on the others,
// so that the two sides no longer take turns on the same cores. Each
// side's Go runtime sizes GOMAXPROCS to the CPUs it is given.
type cpuSplit struct {
	server, tool []int // CPU numbers
}

// newCPUSplit gives the last n of the CPUs this process may use to the
// servers and the rest to the tool.
func newCPUSplit(n int) (*cpuSplit, error) {
	cpus, err := allowedCPUs()
	if err != nil {
		return nil, err
	}
	if n < 1 || n >= len(cpus) {
		return nil, fmt.Errorf("-server-cpus: want 1…%d (this process may use %d CPUs)", len(cpus)-1, len(cpus))
	}
	k := len(cpus) - n
	return &cpuSplit{server: cpus[k:], tool: cpus[:k]}, nil
}

// String names the split, for the results: "server 1, tool 0".
func (s *cpuSplit) String() string {
	return fmt.Sprintf("server %s, tool %s", cpuList(s.server), cpuList(s.tool))
}

// cpuList writes ascending CPU numbers as taskset -c reads them and /proc
// writes them: runs as "0-3", others apart, "0-3,6".
func cpuList(cpus []int) string {
	var parts []string
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(cpus[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", cpus[i], cpus[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// start starts cmd on the servers' CPUs (s nil: where this tool runs).
func (s *cpuSplit) start(cmd *exec.Cmd) error {
	if s == nil {
		return cmd.Start()
	}
	return startOn(cmd, s.server)
}
