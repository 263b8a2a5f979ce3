package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/switchboard-dev/switchboard/internal/pgtest"
)

// TestMain lets the test binary act as a worker or a gateway process, as
// the command does when it spreads agents over processes or measures a
// bare reverse proxy.
func TestMain(m *testing.M) {
	if code, ok := subprocess(os.Args[1:]); ok {
		os.Exit(code)
	}
	dir, err := os.MkdirTemp("", "switchboard-load-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buildDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildDir holds the switchboard command serverBuild builds (made by
// TestMain, removed when the tests end).
var buildDir string

// serverBuild runs go build of the switchboard command, once per test
// process: the binary's path, or the error and what go build printed.
var serverBuild = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(buildDir, "switchboard")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/switchboard-dev/switchboard/cmd/switchboard")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// buildServer returns the switchboard command, built once for the tests,
// which only run it.
func buildServer(t *testing.T) string {
	t.Helper()
	bin, err := serverBuild()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers and agents")
	}
	bin := buildServer(t)
	base := config{peers: 3, duration: 20 * time.Second, count: 30, payload: 100, blocking: true, direct: true, gateway: true,
		agentsPerProc: 2, connectRate: 4, switchboard: bin, settle: 100 * time.Millisecond, instances: 1,
		communities: 2, skills: 2}
	type scenarioTest struct {
		name      string
		scenario  string
		agents    int
		blocking  bool
		instances int
		binding   string // the bindings scenario's
	}
	tests := []scenarioTest{
		{"RouteOverWorkerProcesses", "route", 5, true, 1, ""}, // 2 agents here, 3 in two worker processes
		{"RouteNonBlocking", "route", 2, false, 1, ""},
		{"Inbox", "inbox", 3, true, 1, ""},
		{"Direct", "direct", 1, true, 1, ""},
		{"Ceiling", "ceiling", 1, true, 1, ""},
		{"Idle", "idle", 4, true, 1, ""},
		{"Discover", "discover", 4, true, 1, ""},         // by name and by discovery, in turns
		{"Front", "front", 2, true, 1, ""},               // direct and through the fronts, in turns
		{"FrontPassThrough", "front", 2, true, 1, ""},    // the same with -record none
		{"BindingsREST", "bindings", 2, true, 1, "rest"}, // JSON-RPC and HTTP+JSON, in turns
		{"BindingsGRPC", "bindings", 2, true, 1, "grpc"}, // JSON-RPC and gRPC, in turns
	}
	if pg := os.Getenv(pgtest.EnvVar); pg != "" {
		base.database = pg
		tests = append(tests, scenarioTest{"CrossOnPostgres", "cross", 3, true, 1, ""}, scenarioTest{"IdleOverThreeInstances", "idle", 7, true, 3, ""})
	} else {
		t.Logf("%s is not set: the cross scenario (PostgreSQL) is not run", pgtest.EnvVar)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := base
			cfg.scenario, cfg.agents, cfg.blocking, cfg.instances = tt.scenario, tt.agents, tt.blocking, tt.instances
			if tt.binding != "" {
				cfg.binding = tt.binding
			}
			if tt.name == "FrontPassThrough" {
				cfg.record = "none"
			}
			if err := cfg.check(); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := run(ctx, &cfg, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			res.printTable(&out)
			if err := res.printJSON(&out); err != nil {
				t.Fatal(err)
			}
			t.Log("\n" + out.String())
			if tt.scenario == "idle" {
				if res.ServerRSS <= 0 || res.RSSPerAgent == 0 {
					t.Errorf("idle: no server memory measured: %+v", res)
				}
				if res.AgentsHeld == nil || *res.AgentsHeld != int64(tt.agents) {
					t.Errorf("idle: agents held %v, want %d", res.AgentsHeld, tt.agents)
				}
				return
			}
			if res.Tasks != int64(cfg.count) || res.Errors != 0 {
				t.Errorf("tasks %d errors %d (%s), want %d and 0", res.Tasks, res.Errors, res.FirstError, cfg.count)
			}
			if res.P50Ms <= 0 || res.P99Ms < res.P50Ms || res.TasksPerS <= 0 {
				t.Errorf("implausible figures: %+v", res)
			}
			if tt.scenario == "cross" && (res.SameTasksPerS <= 0 || res.SameErrors != 0) {
				t.Errorf("cross: the same-instance path was not measured: %+v", res)
			}
			if tt.scenario == "bindings" && (res.JSONRPCTasksPerS <= 0 || res.JSONRPCErrors != 0) {
				t.Errorf("bindings: the JSON-RPC path was not measured: %+v", res)
			}
			if tt.scenario == "discover" && (res.NameTasksPerS <= 0 || res.NameErrors != 0) {
				t.Errorf("discover: the by-name path was not measured: %+v", res)
			}
			if (tt.scenario == "route" || tt.scenario == "inbox" || tt.scenario == "front") && (res.DirectTasksPerS <= 0 || res.DirectErrors != 0) {
				t.Errorf("%s: the direct path was not measured: %+v", tt.scenario, res)
			}
			if tt.scenario == "front" && (res.GatewayTasksPerS <= 0 || res.GatewayErrors != 0) {
				t.Errorf("front: the gateway path was not measured: %+v", res)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	r := &phaseResult{}
	for i := 1; i <= 1000; i++ {
		r.latencies = append(r.latencies, time.Duration(i)*time.Millisecond)
	}
	for p, want := range map[float64]float64{50: 500, 99: 990, 99.9: 999, 100: 1000} {
		if got := r.percentile(p); got != want {
			t.Errorf("p%v: got %v ms, want %v", p, got, want)
		}
	}
	if (&phaseResult{}).percentile(99) != 0 {
		t.Error("no samples should give 0")
	}
}

func TestFlagsRefuseWhatCannotWork(t *testing.T) {
	for _, args := range [][]string{
		{"-scenario", "nope"},
		{"-agents", "0"},
		{"-peers", "100000"},
		{"-duration", "0s"},
		{"-scenario", "cross"}, // no -database
		{"-server", "http://127.0.0.1:1"},
		{"-payload", "-1"},
		{"-instances", "3"}, // idle on PostgreSQL only
		{"-tls", "-scenario", "idle"},
		{"-tls", "-server", "https://127.0.0.1:1", "-owner-token", "sbo_x"},
		{"-tls-insecure"}, // no -server
		{"-tls-insecure", "-server", "https://example.com", "-owner-token", "sbo_x"},
		{"-tls-root", "root.pem"}, // no -server
	} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("%v: accepted", args)
		}
	}
	if _, err := parseFlags([]string{"-scenario", "inbox", "-agents", "10", "-json"}, io.Discard); err != nil {
		t.Errorf("valid flags refused: %v", err)
	}
}

// TestRouteOverTLS: with -tls the tool starts its server with a
// certificate it made and routes the peers' tasks over https, trusting
// that certificate alone.
func TestRouteOverTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server and agents")
	}
	cfg := config{scenario: "route", agents: 2, peers: 2, duration: 20 * time.Second, count: 12, payload: 10,
		blocking: true, agentsPerProc: 10, connectRate: 4, instances: 1, switchboard: buildServer(t), tls: true}
	if err := cfg.check(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := run(ctx, &cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TLS || res.Tasks != 12 || res.Errors != 0 {
		t.Fatalf("over https: tls %v, %d tasks, %d errors (%s)", res.TLS, res.Tasks, res.Errors, res.FirstError)
	}
}

// TestAgainstRunningServer: with -server the tool measures a deployment it
// did not start, and deletes the agents it created when it ends.
func TestAgainstRunningServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server and agents")
	}
	bin := buildServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	token := newOwnerToken()
	srv, err := startServer(ctx, bin, io.Discard, nil, "--data", t.TempDir(), "--owner-token", token, "--rate-per-minute", "0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stop()
	cfg := config{scenario: "route", agents: 3, peers: 2, duration: 20 * time.Second, count: 12, payload: 10,
		blocking: true, agentsPerProc: 10, connectRate: 4, instances: 1, server: srv.url, ownerToken: token}
	if err := cfg.check(); err != nil {
		t.Fatal(err)
	}
	res, err := run(ctx, &cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if res.Tasks != 12 || res.Errors != 0 || res.ServerRSS != 0 {
		t.Errorf("tasks %d errors %d (%s) server RSS %d, want 12, 0 and no RSS for a server it did not start",
			res.Tasks, res.Errors, res.FirstError, res.ServerRSS)
	}
	owner := &ownerClient{base: srv.url, token: token, http: &http.Client{Timeout: 10 * time.Second}}
	var agents []map[string]any
	if err := owner.call(ctx, "GET", "/agents", nil, &agents); err != nil {
		t.Fatal(err)
	}
	if len(agents) != 0 {
		t.Errorf("%d agents left on the deployment after the run", len(agents))
	}
}

// TestMeasureCPUCountsTheMeasuredWindowOnly checks that the CPU of the
// warm-up is not counted against the measured phase: a server busy only
// during the warm-up measures nothing, one busy only while measured
// measures what it used, and one busy throughout measures its rate. Each
// case runs in a synctest bubble: the sampler's timers and the server's
// CPU (a function of the time) follow the bubble's clock, so the server's
// rate comes out exact.
func TestMeasureCPUCountsTheMeasuredWindowOnly(t *testing.T) {
	const warmup, measured = 300 * time.Millisecond, 300 * time.Millisecond
	for _, tt := range []struct {
		name       string
		busy       func(elapsed time.Duration) time.Duration // CPU used by then
		stopAfter  time.Duration
		wantServer float64
	}{
		{"busy in the warm-up only", func(e time.Duration) time.Duration { return min(e, warmup) }, warmup + measured + 100*time.Millisecond, 0},
		{"busy while measured only", func(e time.Duration) time.Duration { return max(e-warmup, 0) }, warmup + measured + 100*time.Millisecond, 1},
		{"half a core throughout", func(e time.Duration) time.Duration { return e / 2 }, warmup + measured + 100*time.Millisecond, 0.5},
		{"ended early", func(e time.Duration) time.Duration { return e / 2 }, warmup + measured/2, 0.5},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				server := func() float64 { return tt.busy(time.Since(start)).Seconds() }
				report := measureCPU(start.Add(warmup), start.Add(warmup+measured), server)
				time.Sleep(tt.stopAfter) // on the bubble's clock: the run's length
				cores, tool := report()
				if d := cores - tt.wantServer; d < -1e-9 || d > 1e-9 {
					t.Errorf("server %.3f cores, want %.2f", cores, tt.wantServer)
				}
				if tool < 0 || tool > 2 { // the tool's own CPU is real, over the bubble's time
					t.Errorf("tool %.3f cores: implausible", tool)
				}
			})
		})
	}
	report := measureCPU(time.Now().Add(time.Hour), time.Now().Add(2*time.Hour), func() float64 { return 1 })
	if server, tool := report(); server != 0 || tool != 0 {
		t.Errorf("ended during the warm-up: %.3f and %.3f cores, want nothing", server, tool)
	}
}

// TestTurns: the two kinds of a comparison take turns a, b, b, a in
// rounds, their shares of -count add up to it, and only each kind's first
// turn has the whole -warmup.
func TestTurns(t *testing.T) {
	for _, tt := range []struct {
		cfg  config
		want int
	}{
		{config{duration: 20 * time.Second}, 4},
		{config{duration: 3 * time.Second}, 1},
		{config{duration: 20 * time.Second, rounds: 2}, 2},
		{config{duration: 20 * time.Second, count: 5}, 2},
		{config{duration: 20 * time.Second, count: 1}, 1},
	} {
		if got := tt.cfg.turns(); got != tt.want {
			t.Errorf("%+v: %d rounds, want %d", tt.cfg, got, tt.want)
		}
	}
	cfg := config{duration: 8 * time.Second, count: 30, warmup: 2 * time.Second}
	d := &driver{cfg: &cfg, run: "r"}
	total := 0
	seen := map[string]bool{}
	for k := range 8 {
		tc := d.turn(k, 8)
		total += tc.cfg.count
		if tc.cfg.count < 3 || tc.cfg.count > 4 || tc.cfg.duration != time.Second {
			t.Errorf("turn %d: count %d, duration %v", k, tc.cfg.count, tc.cfg.duration)
		}
		if want := map[bool]time.Duration{true: 2 * time.Second, false: settle}[k == 0]; tc.cfg.warmup != want {
			t.Errorf("turn %d: warmup %v, want %v", k, tc.cfg.warmup, want)
		}
		if seen[tc.run] {
			t.Errorf("turn %d: run %q again", k, tc.run)
		}
		seen[tc.run] = true
	}
	if total != cfg.count || d.cfg.count != 30 {
		t.Errorf("the turns' counts add up to %d, want %d (and the driver's own unchanged: %d)", total, cfg.count, d.cfg.count)
	}
}
