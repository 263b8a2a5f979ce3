package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// serverProcess is a switchboard serve process this tool started.
type serverProcess struct {
	url  string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
}

// startServer starts bin serve on a free loopback port with args, on the
// servers' CPUs of split (nil: anywhere), and waits until /readyz answers.
func startServer(ctx context.Context, bin string, logs io.Writer, split *cpuSplit, args ...string) (*serverProcess, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	all := append([]string{"serve", "--addr", addr, "--log-level", "warn"}, args...)
	cmd := exec.Command(bin, all...)
	cmd.Stdout = logs
	cmd.Stderr = logs
	if err := split.start(cmd); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	p := &serverProcess{url: "http://" + addr, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if ready(ctx, p.url) {
			return p, nil
		}
		select {
		case <-p.done:
			return nil, fmt.Errorf("%s serve exited at start: %v (run with -v to see its log)", bin, cmd.ProcessState)
		case <-ctx.Done():
			p.stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, errors.New("the server was not ready within 30 s")
		}
	}
}

// ready reports whether base/readyz answers 200.
func ready(ctx context.Context, base string) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/readyz", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// stop asks the server to shut down and kills it after 15 s.
func (p *serverProcess) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// rss returns the process's resident memory in bytes.
func (p *serverProcess) rss() int64 { return processRSS(p.cmd.Process.Pid) }

// cpuSeconds returns the user and system CPU time the process used so far.
func (p *serverProcess) cpuSeconds() float64 { return processCPU(p.cmd.Process.Pid) }

// processRSS reads VmRSS from /proc; 0 where there is no /proc.
func processRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's CPU times on Linux.
const clockTicks = 100

// processCPU reads utime+stime from /proc/PID/stat in seconds; 0 where
// there is no /proc.
func processCPU(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces; fields after its ")".
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / clockTicks
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// findSwitchboard returns the switchboard binary to start: the -switchboard
// flag, else one beside this executable, else one on $PATH, else one built
// with the go tool from this module into dir.
func findSwitchboard(flagValue, dir string, logs io.Writer) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), "switchboard")
		if st, err := os.Stat(p); err == nil && !st.IsDir() && !strings.Contains(self, "go-build") {
			return p, nil
		}
	}
	if p, err := exec.LookPath("switchboard"); err == nil {
		return p, nil
	}
	out := filepath.Join(dir, "switchboard")
	fmt.Fprintln(logs, "building switchboard with the go tool (pass -switchboard to skip this)")
	cmd := exec.Command("go", "build", "-o", out, "github.com/switchboard-dev/switchboard/cmd/switchboard")
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("no switchboard binary beside this one or on $PATH, and go build failed: %w", err)
	}
	return out, nil
}

// newOwnerToken returns a random operator token for a server this tool starts.
func newOwnerToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return "sbo_load-" + hex.EncodeToString(b)
}
