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
	"testing"
	"time"
)

// cpusAllowed reads the CPUs a thread of process pid may use, as
// /proc writes them ("0", "1", "0-1").
func cpusAllowed(t *testing.T, pid, tid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/status", pid, tid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no Cpus_allowed_list for %d/%d", pid, tid)
	return ""
}

// threadsOn returns how many threads of pid may use exactly cpus.
func threadsOn(t *testing.T, pid int, cpus string) (on, all int) {
	t.Helper()
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range tasks {
		var tid int
		fmt.Sscan(e.Name(), &tid)
		all++
		if cpusAllowed(t, pid, tid) == cpus {
			on++
		}
	}
	return on, all
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
	server, tool := cpuList(split.server), rangeList(split.tool)

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
	if on, all := threadsOn(t, os.Getpid(), rangeList(cpus)); on != all {
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
	for range 8 { // threads made after the pin inherit it
		go func() {
			runtime.LockOSThread()
			<-done
		}()
	}
	time.Sleep(50 * time.Millisecond) // no assertion waits on this: the threads are counted as they are
	tool := rangeList(split.tool)
	tasks, _ := filepath.Glob("/proc/self/task/*/status")
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		if !strings.Contains(string(b), "Cpus_allowed_list:\t"+tool+"\n") {
			fmt.Println("a thread is elsewhere:", f)
			os.Exit(1)
		}
	}
	fmt.Printf("pinned: every thread on %s, GOMAXPROCS %d\n", tool, runtime.GOMAXPROCS(0))
	close(done)
}

// rangeList writes CPU numbers as /proc does: runs as "0-3".
func rangeList(cpus []int) string {
	var parts []string
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, fmt.Sprint(cpus[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", cpus[i], cpus[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
