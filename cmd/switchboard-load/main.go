package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"
)

// config is what the flags say.
type config struct {
	scenario      string
	binding       string
	record        string // front: what the fronts record, task or none ("": the server's default)
	gateway       bool   // front: also measure a bare reverse proxy (gateway.go)
	agents        int
	peers         int
	duration      time.Duration
	count         int
	warmup        time.Duration
	rounds        int
	payload       int
	rate          float64
	blocking      bool
	direct        bool
	jsonOut       bool
	server        string
	ownerToken    string
	switchboard   string
	database      string
	agentsPerProc int
	connectRate   int
	settle        time.Duration
	heartbeat     time.Duration
	verbose       bool
	serverArgs    []string
	instances     int
	cpuProfile    string
	communities   int
	skills        int
	serverCPUs    int
	split         *cpuSplit // from serverCPUs; nil: the servers share the tool's CPUs
	tls           bool      // start the server with a certificate; peers over https (tls.go)
	tlsRoot       string    // with -server: the root to trust
	tlsInsecure   bool      // with -server on loopback: no certificate check
}

// subprocess runs this program as one of the processes it starts, a
// worker holding agents or a gateway, when args ask for one, and returns
// its exit code; ok is false when args ask for neither.
func subprocess(args []string) (code int, ok bool) {
	var err error
	switch {
	case len(args) > 0 && args[0] == workerArg:
		err = runWorker(os.Stdin, os.Stdout)
	case len(args) > 1 && args[0] == gatewayArg:
		err = runGateway(args[1], os.Stdin, os.Stdout)
	default:
		return 0, false
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "switchboard-load "+args[0]+":", err)
		return 1, true
	}
	return 0, true
}

// startSubprocess starts this program with args (a worker or a gateway)
// on the servers' CPUs of split (nil: anywhere), its stderr this one's,
// and returns it with its stdin and stdout.
func startSubprocess(split *cpuSplit, args ...string) (*exec.Cmd, io.WriteCloser, io.ReadCloser, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, nil, err
	}
	cmd := exec.Command(self, args...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	if err := split.start(cmd); err != nil {
		return nil, nil, nil, err
	}
	return cmd, stdin, stdout, nil
}

func main() {
	if code, ok := subprocess(os.Args[1:]); ok {
		os.Exit(code)
	}
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		os.Exit(2)
	}
	if cfg.serverCPUs > 0 {
		split, err := newCPUSplit(cfg.serverCPUs)
		if err == nil {
			err = split.pin()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "switchboard-load:", err)
			os.Exit(2)
		}
		cfg.split = split
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if cfg.cpuProfile != "" {
		f, err := os.Create(cfg.cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "switchboard-load: -cpuprofile:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	res, err := run(ctx, cfg, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "switchboard-load:", err)
		stop()
		pprof.StopCPUProfile()
		os.Exit(1)
	}
	res.printTable(os.Stdout)
	if cfg.jsonOut {
		if err := res.printJSON(os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "switchboard-load:", err)
			os.Exit(1)
		}
	}
}

// parseFlags reads the command line.
func parseFlags(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("switchboard-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &config{}
	fs.StringVar(&c.scenario, "scenario", "route", "idle, route, inbox, cross, direct, ceiling, session, discover, front or bindings")
	fs.BoolVar(&c.gateway, "gateway", true, "front: also measure a bare reverse proxy (net/http/httputil, a process of its own) in front of the same upstream, in turns with the other two paths")
	fs.StringVar(&c.record, "record", "task", "front: what the fronts record of their tasks, task (a durable record) or none (pass-through)")
	fs.StringVar(&c.binding, "binding", "rest", "bindings: the binding measured against JSON-RPC, rest (HTTP+JSON) or grpc (gRPC over h2c)")
	fs.IntVar(&c.agents, "agents", 100, "agents to create and connect")
	fs.IntVar(&c.peers, "peers", 32, "concurrent peers sending messages")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "how long each measured phase sends (after -warmup)")
	fs.IntVar(&c.count, "count", 0, "stop a phase after this many tasks (0: only -duration bounds it)")
	fs.DurationVar(&c.warmup, "warmup", 2*time.Second, "sending before each measured phase, not counted")
	fs.IntVar(&c.rounds, "rounds", 0, "discover and front: the rounds of turns the two kinds take (a, b, b, a), each a slice of -duration (0: turns of about 2.5 s)")
	fs.IntVar(&c.payload, "payload", 1024, "bytes of text in each message")
	fs.Float64Var(&c.rate, "rate", 0, "tasks per second across all peers, scheduled open-loop (latency counts from the scheduled time); 0: each peer sends as soon as its last call returned")
	fs.BoolVar(&c.blocking, "blocking", true, "blocking SendMessage; false: returnImmediately, then GetTask until the task is done")
	fs.BoolVar(&c.direct, "direct", true, "route: also measure the same peers against an a2a-go v2 reference server, in the same run")
	fs.BoolVar(&c.jsonOut, "json", false, "after the table, print one line of JSON with the results")
	fs.StringVar(&c.server, "server", "", "base URL of a running deployment to measure (default: start one)")
	fs.StringVar(&c.ownerToken, "owner-token", os.Getenv("SWITCHBOARD_OWNER_TOKEN"), "with -server: an owner token (sbo_…) to create the agents with")
	fs.StringVar(&c.switchboard, "switchboard", "", "the switchboard binary to start (default: beside this one, then $PATH, then go build)")
	fs.StringVar(&c.database, "database", os.Getenv("SWITCHBOARD_LOAD_DATABASE"), "a postgres:// URL for the servers this tool starts (cross needs one; the others use SQLite without it); the tool creates a schema of its own in it and drops it after")
	fs.IntVar(&c.instances, "instances", 1, "idle: start this many instances on -database (PostgreSQL), routed together by their embedded NATS servers, and spread the agents over them; session: the senders connect to the first, the receivers to the last")
	fs.IntVar(&c.agentsPerProc, "agents-per-process", 9000, "connector agents one process holds; more are spread over worker processes")
	fs.IntVar(&c.connectRate, "connect-concurrency", 256, "agent connections being set up at once")
	fs.DurationVar(&c.settle, "settle", 3*time.Second, "idle: how long to wait after the last agent connected before reading the server's memory")
	fs.DurationVar(&c.heartbeat, "heartbeat", 0, "the server's heartbeat interval for agents it starts (0: its default)")
	fs.BoolVar(&c.verbose, "v", false, "show the started servers' warnings on stderr")
	fs.IntVar(&c.communities, "communities", 10, "discover: communities the agents are spread over (agent i in community i mod N)")
	fs.IntVar(&c.skills, "skills", 10, "discover: skills the agents of each community are spread over")
	fs.IntVar(&c.serverCPUs, "server-cpus", 0, "run the servers this tool starts on the last N CPUs and this tool (peers, agents, the reference upstream) on the others, as a server on a machine of its own (0: all share every CPU)")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write this tool's own CPU profile (peers, agents, and the direct server) to the file")
	fs.BoolVar(&c.tls, "tls", false, "route, inbox: start the server with a certificate this tool makes (serve --tls-cert/--tls-key) and send the peers' messages over https with keep-alive (HTTP/1.1), trusting it; agents stay on plain loopback")
	fs.StringVar(&c.tlsRoot, "tls-root", "", "with -server https://…: a PEM file of the root to trust")
	fs.BoolVar(&c.tlsInsecure, "tls-insecure", false, "with -server https://127.0.0.1:…: do not check the server's certificate (loopback only)")
	fs.Func("server-arg", "an extra argument for the switchboard serve processes this tool starts (repeatable), e.g. -server-arg=--pprof-addr=127.0.0.1:6060; with -instances, {i} stands for the instance's number (--pprof-addr=127.0.0.1:606{i})", func(s string) error {
		c.serverArgs = append(c.serverArgs, s)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		err := fmt.Errorf("unexpected arguments: %v", fs.Args())
		fmt.Fprintln(stderr, err)
		return nil, err
	}
	if err := c.check(); err != nil {
		fmt.Fprintln(stderr, "switchboard-load:", err)
		return nil, err
	}
	return c, nil
}

// Bounds that keep every run finite whatever the flags say.
const (
	maxAgents   = 200_000
	maxPeers    = 10_000
	maxDuration = time.Hour
	maxTasks    = 50_000_000
)

// check refuses flags that cannot work.
func (c *config) check() error {
	switch c.scenario {
	case "idle", "route", "inbox", "cross", "direct", "ceiling", "session", "discover", "front", "bindings":
	default:
		return fmt.Errorf("-scenario: want idle, route, inbox, cross, direct, ceiling, session, discover, front or bindings, got %q", c.scenario)
	}
	if c.record != "" && c.record != "task" && c.record != "none" {
		return fmt.Errorf("-record: want task or none, got %q", c.record)
	}
	if c.scenario == "bindings" && c.binding != "rest" && c.binding != "grpc" {
		return fmt.Errorf("-binding: want rest or grpc, got %q", c.binding)
	}
	switch {
	case c.agents < 1 || c.agents > maxAgents:
		return fmt.Errorf("-agents: want 1…%d", maxAgents)
	case c.peers < 1 || c.peers > maxPeers:
		return fmt.Errorf("-peers: want 1…%d", maxPeers)
	case c.duration <= 0 || c.duration > maxDuration:
		return fmt.Errorf("-duration: want more than 0 and at most %v", maxDuration)
	case c.warmup < 0 || c.warmup > maxDuration:
		return fmt.Errorf("-warmup: want 0…%v", maxDuration)
	case c.rounds < 0 || c.rounds > 100:
		return fmt.Errorf("-rounds: want 0…100")
	case c.count < 0 || c.count > maxTasks:
		return fmt.Errorf("-count: want 0…%d", maxTasks)
	case c.payload < 0 || c.payload > 512<<10:
		return errors.New("-payload: want 0…524288 bytes")
	case c.rate < 0:
		return errors.New("-rate: want 0 or more")
	case c.agentsPerProc < 1:
		return errors.New("-agents-per-process: want 1 or more")
	case c.connectRate < 1:
		return errors.New("-connect-concurrency: want 1 or more")
	case c.server != "" && c.ownerToken == "" && c.scenario != "direct" && c.scenario != "ceiling":
		return errors.New("-server needs -owner-token (or SWITCHBOARD_OWNER_TOKEN) to create agents")
	case c.scenario == "cross" && c.server != "":
		return errors.New("-scenario cross starts its own two instances; -server does not apply")
	case c.scenario == "discover" && (c.communities < 1 || c.skills < 1):
		return errors.New("-communities and -skills: want 1 or more")
	case c.serverCPUs < 0:
		return errors.New("-server-cpus: want 0 or more")
	case c.serverCPUs > 0 && c.server != "":
		return errors.New("-server-cpus places the servers this tool starts; with -server it starts none")
	case c.instances < 1 || c.instances > 32:
		return errors.New("-instances: want 1…32")
	case c.instances > 1 && ((c.scenario != "idle" && c.scenario != "session") || c.database == "" || c.server != ""):
		return errors.New("-instances above 1 is for -scenario idle or session on -database postgres://… (without -server)")
	case c.scenario == "cross" && c.database == "":
		return errors.New("-scenario cross needs -database postgres://… (or SWITCHBOARD_LOAD_DATABASE): both instances share it")
	}
	return c.checkTLS()
}
