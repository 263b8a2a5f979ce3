package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// threadCPUs returns the CPUs each thread of process pid may use, as
// /proc writes them ("0", "1", "0-1").
func threadCPUs(pid int) ([]string, error) {
	files, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no threads listed for %d: %v", pid, err)
	}
	var cpus []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		found := false
		for line := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				cpus, found = append(cpus, strings.TrimSpace(v)), true
			}
		}
		if !found {
			return nil, fmt.Errorf("no Cpus_allowed_list in %s", f)
		}
	}
	return cpus, nil
}

// threadsOn returns how many threads of pid may use exactly cpus.
func threadsOn(t *testing.T, pid int, cpus string) (on, all int) {
	t.Helper()
	each, err := threadCPUs(pid)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range each {
		if c == cpus {
			on++
		}
	}
	return on, len(each)
}

func TestCPUSplitRefusesWhatCannotBe(t *testing.T) {
	cpus, err := allowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, len(cpus), len(cpus) + 1} {
		if _, err := newCPUSplit(n); err == nil {
			t.Errorf("-server-cpus %d with %d CPUs: accepted", n, len(cpus))
		}
	}
	if _, err := parseFlags([]string{"-server-cpus", "1", "-server", "http://127.0.0.1:1", "-owner-token", "sbo_x"}, io.Discard); err == nil {
		t.Error("-server-cpus with -server: accepted")
	}
}

// TestCPUSplit starts a server on the last CPU and pins a process of the
// tool (this test binary, run again) to the others: every thread of each
// ends on its own side, and the tool's GOMAXPROCS is its CPUs.
func TestCPUSplit(t *testing.T) {
	if os.Getenv("SWITCHBOARD_LOAD_PIN_CHILD") == "1" {
		pinChild()
		return
	}
	if testing.Short() {
		t.Skip("starts a server")
	}
	cpus, err := allowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if len(cpus) < 2 {
		t.Skip("one CPU: nothing to split")
	}
	split, err := newCPUSplit(1)
	if err != nil {
		t.Fatal(err)
	}
	server, tool := cpuList(split.server), cpuList(split.tool)

	// The server: started from this process, which stays where it was.
	bin := buildServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := startServer(ctx, bin, io.Discard, split, "--data", t.TempDir(), "--owner-token", newOwnerToken())
	if err != nil {
		t.Fatal(err)
	}
	defer p.stop()
	if on, all := threadsOn(t, p.cmd.Process.Pid, server); on != all {
		t.Errorf("%d of the server's %d threads on CPU %s", on, all, server)
	}
	if on, all := threadsOn(t, os.Getpid(), cpuList(cpus)); on != all {
		t.Errorf("starting the server moved %d of this process's %d threads", all-on, all)
	}

	// The tool: pinned once it runs, threads and GOMAXPROCS.
	cmd := exec.Command(os.Args[0], "-test.run=^TestCPUSplit$")
	cmd.Env = append(os.Environ(), "SWITCHBOARD_LOAD_PIN_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the pinned process: %v\n%s", err, out)
	}
	want := fmt.Sprintf("pinned: every thread on %s, GOMAXPROCS %d", tool, len(split.tool))
	if !strings.Contains(string(out), want) {
		t.Errorf("the pinned process said:\n%s\nwant %q", out, want)
	}
}

// pinChild pins this process as -server-cpus 1 does, starts more threads,
// and says where they all are.
func pinChild() {
	split, err := newCPUSplit(1)
	if err == nil {
		err = split.pin()
	}
	if err != nil {
		fmt.Println("pin:", err)
		os.Exit(1)
	}
	done := make(chan struct{})
	var started sync.WaitGroup
	for range 8 { // each on a thread of its own, made after the pin
		started.Add(1)
		go func() {
			runtime.LockOSThread()
			started.Done()
			<-done
		}()
	}
	started.Wait()
	tool := cpuList(split.tool)
	each, err := threadCPUs(os.Getpid())
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	for _, c := range each {
		if c != tool {
			fmt.Println("a thread may run on", c)
			os.Exit(1)
		}
	}
	fmt.Printf("pinned: every thread on %s, GOMAXPROCS %d\n", tool, runtime.GOMAXPROCS(0))
	close(done)
}
