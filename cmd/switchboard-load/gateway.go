package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"strings"
	"time"
)

// The gateway: a bare reverse proxy (net/http/httputil's, nothing parsed,
// nothing checked) in a process of its own, between the peers and the
// front scenario's upstream. It is the yardstick of a gateway's cost on
// this machine: what a second HTTP exchange costs with no work of a
// front's on top (tokens, limits, ids, scrubbing). The front scenario
// measures it in turns with the direct path and the fronts.

// gatewayArg, as the first argument, makes this program a gateway
// process: it proxies to the upstream URL that follows, prints the URL
// it listens on, and serves until stdin closes.
const gatewayArg = "-gateway-process"

// gatewayProcess is a started gateway.
type gatewayProcess struct {
	cmd   *exec.Cmd
	stdin io.Closer
	url   string
}

// startGateway starts a gateway process in front of upstream, on the
// servers' CPUs of split (nil: anywhere).
func startGateway(upstream string, split *cpuSplit) (*gatewayProcess, error) {
	cmd, stdin, stdout, err := startSubprocess(split, gatewayArg, upstream)
	if err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, errors.New("the gateway process ended before it listened")
	}
	return &gatewayProcess{cmd: cmd, stdin: stdin, url: strings.TrimSpace(line)}, nil
}

// cpuSeconds returns the CPU time the gateway used so far.
func (g *gatewayProcess) cpuSeconds() float64 { return processCPU(g.cmd.Process.Pid) }

// stop ends the gateway process.
func (g *gatewayProcess) stop() {
	g.stdin.Close()
	waited := make(chan struct{})
	go func() { _ = g.cmd.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		_ = g.cmd.Process.Kill()
		<-waited
	}
}

// runGateway is the gateway process: it serves a reverse proxy to
// upstream on a free loopback port, writes its URL to out, and returns
// when in closes.
func runGateway(upstream string, in io.Reader, out io.Writer) error {
	u, err := url.Parse(upstream)
	if err != nil {
		return err
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.Transport = &http.Transport{MaxIdleConnsPerHost: 1024, IdleConnTimeout: time.Minute}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	fmt.Fprintf(out, "http://%s/\n", l.Addr())
	_, _ = io.Copy(io.Discard, in)
	return srv.Close()
}
