package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/switchboard-dev/switchboard/seal"
)

// deployment is the Switchboard instance(s) a run measures.
type deployment struct {
	owner      *ownerClient
	peerURL    string           // where peers send
	agentURLs  []string         // where agents connect: agent i to agentURLs[i % len]
	procs      []*serverProcess // started by this tool; empty with -server
	agentProcs []*serverProcess // the started instances agents connect to
	tls        *serverTLS       // -tls: the certificate of the server started
	cleanup    []func()
}

// close stops what the deployment started.
func (d *deployment) close() {
	for _, p := range d.procs {
		p.stop()
	}
	for i := len(d.cleanup) - 1; i >= 0; i-- {
		d.cleanup[i]()
	}
}

// rss is the resident memory of the instances agents connect to.
func (d *deployment) rss() int64 {
	var n int64
	for _, p := range d.agentProcs {
		n += p.rss()
	}
	return n
}

// held counts the agents connected to the started instances now, from the
// switchboard_agents_connected gauge each serves at /metrics; false when
// an instance did not say.
func (d *deployment) held(ctx context.Context) (int64, bool) {
	var n int64
	for _, p := range d.agentProcs {
		v, err := scrapeGauge(ctx, p.url+"/metrics", "switchboard_agents_connected")
		if err != nil {
			return 0, false
		}
		n += int64(v)
	}
	return n, len(d.agentProcs) > 0
}

// cpuSeconds is the CPU time of all started instances.
func (d *deployment) cpuSeconds() float64 {
	var s float64
	for _, p := range d.procs {
		s += p.cpuSeconds()
	}
	return s
}

// run performs cfg's scenario and returns what it measured.
func run(ctx context.Context, cfg *config, logs io.Writer) (*result, error) {
	res := &result{Scenario: cfg.scenario, Agents: cfg.agents, Peers: cfg.peers, PayloadBytes: cfg.payload,
		Blocking: cfg.blocking, Rate: cfg.rate, DurationS: cfg.duration.Seconds()}
	if cfg.split != nil {
		res.CPUs = cfg.split.String()
	}
	d := newDriver(cfg)
	if cfg.scenario == "direct" || cfg.scenario == "ceiling" {
		res.Agents = 0
		start, want := func() (*referenceServer, error) { return startReferenceServer(echoExecutor{}) }, "TASK_STATE_COMPLETED"
		if cfg.scenario == "ceiling" {
			start, want = startFixedAnswerServer, "TASK_STATE_SUBMITTED"
		}
		ref, err := start()
		if err != nil {
			return nil, err
		}
		defer ref.stop()
		pr := d.drive(ctx, phase{name: cfg.scenario, targets: []target{{url: ref.url}}, wantState: want, blocking: cfg.blocking})
		res.setMain(pr)
		if cfg.scenario == "direct" {
			res.setDirect(pr)
		}
		return res, ctx.Err()
	}

	dir, err := os.MkdirTemp("", "switchboard-load-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	serverLogs := io.Discard
	if cfg.verbose {
		serverLogs = logs
	}
	dep, err := deploy(ctx, cfg, dir, serverLogs, logs)
	if err != nil {
		return nil, err
	}
	defer dep.close()
	if err := d.setTLS(cfg, dep); err != nil {
		return nil, err
	}
	res.TLS = dep.tls != nil || strings.HasPrefix(dep.peerURL, "https://")

	if cfg.scenario == "session" {
		return res, runSessions(ctx, cfg, dep, res, logs)
	}
	if cfg.scenario == "front" {
		return res, runFront(ctx, cfg, dep, d, res, logs)
	}
	mode := "connector"
	if cfg.scenario == "inbox" {
		mode = "inbox"
	}
	prefix := "load-" + randomWord()
	fmt.Fprintf(logs, "creating %d %s agents on %s\n", cfg.agents, mode, dep.peerURL)
	agents, err := dep.owner.createAgents(ctx, prefix, mode, cfg.agents, cfg.scenario != "idle", logs)
	if err != nil {
		return nil, fmt.Errorf("create agents: %w", err)
	}
	if len(dep.procs) == 0 { // a deployment of someone else's: leave it as found
		defer dep.owner.deleteAgents(context.Background(), agents)
	}
	base := dep.rss()
	if mode == "connector" {
		tokens := make([]string, len(agents))
		for i, g := range agents {
			tokens[i] = g.AgentToken
		}
		start := time.Now()
		f, err := startFleet(ctx, dep.agentURLs, tokens, cfg.agentsPerProc, cfg.connectRate, logs)
		if err != nil {
			return nil, err
		}
		defer f.stop()
		res.ConnectS = time.Since(start).Seconds()
	}
	if rss := dep.rss(); cfg.scenario != "idle" && rss > 0 && mode == "connector" {
		res.ServerBaseRSS, res.RSSPerAgent = base, (rss-base)/int64(cfg.agents)
	}
	if cfg.scenario == "idle" {
		select {
		case <-time.After(cfg.settle):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if n, ok := dep.held(ctx); ok {
			res.AgentsHeld = &n
		}
		res.ServerRSS = dep.rss()
		if res.ServerRSS > 0 {
			res.RSSPerAgent = (res.ServerRSS - base) / int64(cfg.agents)
			res.ServerBaseRSS = base
		}
		return res, nil
	}

	targets := func(baseURL string) []target {
		ts := make([]target, len(agents))
		for i, g := range agents {
			ts[i] = target{url: baseURL + "/a/" + g.Handle, token: g.PeerToken}
		}
		return ts
	}
	want := "TASK_STATE_COMPLETED"
	if mode == "inbox" {
		want = "TASK_STATE_SUBMITTED"
	}
	if cfg.scenario == "discover" {
		return res, runDiscover(ctx, cfg, dep, d, agents, res, logs)
	}
	if cfg.scenario == "bindings" {
		return res, runBindings(ctx, cfg, dep, d, agents, res, logs)
	}
	if cfg.scenario == "cross" {
		// One phase whose calls alternate between the two paths, so that
		// both are measured under the same load at the same moments.
		fmt.Fprintf(logs, "cross: agents on %s; calls alternate between it (same) and %s (cross)\n", dep.agentURLs[0], dep.peerURL)
		same, cross := targets(dep.agentURLs[0]), targets(dep.peerURL)
		mixed := make([]target, 0, 2*len(same))
		for i := range same {
			cross[i].group = 1
			mixed = append(mixed, same[i], cross[i])
		}
		rs := d.driveGroups(ctx, phase{name: "cross", groups: []string{"same", "cross"}, targets: mixed, wantState: want,
			blocking: cfg.blocking, serverCPU: dep.cpuSeconds})
		res.setSame(rs[0])
		res.setMain(rs[1])
		// The load is both paths together: count it whole.
		res.Tasks, res.TasksPerS = rs[0].tasks+rs[1].tasks, rs[0].tasksPerSecond()+rs[1].tasksPerSecond()
		res.ServerRSS = dep.rss()
		return res, ctx.Err()
	}
	fmt.Fprintf(logs, "%s: peers on %s, agents on %s\n", cfg.scenario, dep.peerURL, dep.agentURLs)
	measured := d.drive(ctx, phase{name: cfg.scenario, targets: targets(dep.peerURL), wantState: want, blocking: cfg.blocking,
		serverCPU: dep.cpuSeconds})
	res.setMain(measured)
	res.ServerRSS = dep.rss()
	if (cfg.scenario == "route" || cfg.scenario == "inbox") && cfg.direct {
		var executor a2asrv.AgentExecutor = echoExecutor{}
		blocking := cfg.blocking
		if mode == "inbox" {
			// a2a-go answers a blocking call only when its task is done, so
			// the peers ask it to return at once, as the inbox does anyway.
			executor, blocking = submitExecutor{}, false
		}
		ref, err := startReferenceServer(executor)
		if err != nil {
			return nil, err
		}
		defer ref.stop()
		fmt.Fprintf(logs, "direct: the same peers against an a2a-go v2 server at %s\n", ref.url)
		res.setDirect(d.drive(ctx, phase{name: "direct", targets: []target{{url: ref.url}}, wantState: want, blocking: blocking}))
	}
	return res, ctx.Err()
}

// deploy starts the instance(s) the scenario needs, or wraps -server.
func deploy(ctx context.Context, cfg *config, dir string, serverLogs, logs io.Writer) (*deployment, error) {
	hc := &http.Client{Timeout: time.Minute}
	if cfg.server != "" {
		return &deployment{owner: &ownerClient{base: cfg.server, token: cfg.ownerToken, http: hc},
			peerURL: cfg.server, agentURLs: []string{cfg.server}}, nil
	}
	bin, err := findSwitchboard(cfg.switchboard, dir, logs)
	if err != nil {
		return nil, err
	}
	token := newOwnerToken()
	common := []string{"--owner-token", token, "--rate-per-minute", "0", "--delivery-deadline", "10m",
		"--blocking-timeout", "60s", "--metrics"}
	if cfg.heartbeat > 0 {
		common = append(common, "--heartbeat", cfg.heartbeat.String())
	}
	if cfg.scenario == "front" {
		common = append(common, "--allow-private-networks") // the upstream is on loopback
	}
	common = append(common, cfg.serverArgs...)
	dep := &deployment{}
	if cfg.instances > 1 {
		return startInstances(ctx, cfg, cfg.instances, bin, dir, token, common, serverLogs, hc)
	}
	if cfg.scenario != "cross" {
		args := append(common, "--data", dir+"/data")
		var httpsAddr string
		if cfg.tls {
			st, err := makeServerTLS(dir)
			if err != nil {
				return nil, fmt.Errorf("-tls: %w", err)
			}
			port, err := freePort()
			if err != nil {
				return nil, err
			}
			httpsAddr, dep.tls = "127.0.0.1:"+strconv.Itoa(port), st
			args = append(args, st.serveArgs(httpsAddr)...)
		}
		if cfg.database != "" {
			dsn, drop, err := loadSchema(ctx, cfg.database)
			if err != nil {
				return nil, err
			}
			dep.cleanup = append(dep.cleanup, drop)
			args = append(args, "--database", dsn)
		}
		p, err := startServer(ctx, bin, serverLogs, cfg.split, args...)
		if err != nil {
			dep.close()
			return nil, err
		}
		dep.procs, dep.agentProcs = []*serverProcess{p}, []*serverProcess{p}
		dep.peerURL, dep.agentURLs = p.url, []string{p.url}
		if httpsAddr != "" {
			dep.peerURL = "https://" + httpsAddr
		}
		dep.owner = &ownerClient{base: p.url, token: token, http: hc}
		return dep, nil
	}
	// cross: two instances; peers on the first, agents on the second.
	dep, err = startInstances(ctx, cfg, 2, bin, dir, token, common, serverLogs, hc)
	if err != nil {
		return nil, err
	}
	dep.agentProcs = dep.procs[1:]
	dep.agentURLs = []string{dep.procs[1].url}
	return dep, nil
}

// startInstances starts n instances on one PostgreSQL schema of their own,
// their embedded NATS servers routed to each other; agents are spread over
// all of them and peers send to the first.
func startInstances(ctx context.Context, cfg *config, n int, bin, dir, token string, common []string, serverLogs io.Writer, hc *http.Client) (*deployment, error) {
	dep := &deployment{}
	dsn, drop, err := loadSchema(ctx, cfg.database)
	if err != nil {
		return nil, err
	}
	dep.cleanup = append(dep.cleanup, drop)
	routes := make([]string, n)
	for i := range routes {
		port, err := freePort()
		if err != nil {
			dep.close()
			return nil, err
		}
		routes[i] = "127.0.0.1:" + strconv.Itoa(port)
	}
	// Instances of one deployment share the keys that seal its secrets.
	secretKey := base64.StdEncoding.EncodeToString(seal.NewKey())
	for i := range n {
		args := make([]string, 0, len(common)+8)
		for _, a := range common {
			args = append(args, strings.ReplaceAll(a, "{i}", strconv.Itoa(i))) // e.g. a pprof port per instance
		}
		args = append(args, "--data", fmt.Sprintf("%s/i%d", dir, i), "--database", dsn, "--secret-key", secretKey,
			"--bus", "embedded", "--nats-cluster-listen", routes[i])
		for j, r := range routes {
			if j != i {
				args = append(args, "--nats-routes", "nats-route://"+r)
			}
		}
		p, err := startServer(ctx, bin, serverLogs, cfg.split, args...)
		if err != nil {
			dep.close()
			return nil, fmt.Errorf("instance %d: %w", i, err)
		}
		dep.procs = append(dep.procs, p)
		dep.agentURLs = append(dep.agentURLs, p.url)
	}
	dep.agentProcs = dep.procs
	dep.peerURL = dep.procs[0].url
	dep.owner = &ownerClient{base: dep.procs[0].url, token: token, http: hc}
	return dep, nil
}

// randomWord returns 8 random lowercase hex characters.
func randomWord() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
