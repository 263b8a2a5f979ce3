package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/internal/atomicfile"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// InitCmd takes an agent from nothing to reachable: it creates the agent
// (or reuses it), saves the client config, sets the wake webhook of an
// inbox agent, installs the connector as a user service on request, and
// issues a first peer token. Each step runs only when something is
// missing, so a second run changes nothing and says so.
type InitCmd struct {
	Handle      string `arg:"" help:"The agent's handle: its address is {server}/a/{handle}."`
	Exec        string `name:"exec" placeholder:"COMMAND" xor:"how" help:"A connector agent that runs COMMAND for each task (see connect --exec)."`
	Forward     string `name:"forward" placeholder:"URL" xor:"how" help:"A connector agent that relays each task to the A2A server at URL (see connect --forward)."`
	Inbox       bool   `name:"inbox" xor:"how" help:"An inbox agent: tasks wait until answered (switchboard inbox, reply); --wake wakes it."`
	Wake        string `name:"wake" placeholder:"URL" help:"With --inbox: the webhook that wakes the agent when work arrives."`
	Preset      string `name:"preset" help:"With --wake: generic (default), claude-code, openclaw-wake, openclaw-agent, hermes or grok-bot."`
	Name        string `name:"name" help:"The agent's display name (when it is created)."`
	Description string `name:"description" help:"What the agent does (when it is created)."`
	Install     bool   `name:"install" help:"With --exec or --forward: install and start the connector as a systemd user service."`
	DryRun      bool   `name:"dry-run" help:"Print what init would do, and do nothing."`
	FirstPeer   string `name:"first-peer" default:"first-peer" help:"Label of the first peer token, issued when the agent has no active one."`
}

// initStep is one thing init does.
type initStep struct {
	say string
	do  func(context.Context) error
}

// initRun is what one run of init knows and has done.
type initRun struct {
	cmd     *InitCmd
	cl      *client
	dir     string // config directory
	cfg     *clientConfig
	mode    string
	agent   *ownerapi.Agent
	token   string // the agent token, when this run got one
	tokenAt string // where the agent token is kept
	peer    string // the first peer token, when this run issued it
	steps   []initStep
	out     io.Writer
	// newToken is set when a step gives the agent a token (create or
	// rotate): an installed unit's environment file then holds an old one.
	newToken bool
}

// connect's defaults, for the unit init installs.
const (
	defaultTaskTimeout = 5 * time.Minute
	defaultConcurrency = 4
)

// Run plans the steps, then does them (or with --dry-run prints them).
func (c *InitCmd) Run(ctx context.Context, cli *CLI) error {
	if err := c.validate(); err != nil {
		return err
	}
	cl, err := newClient(cli)
	if err != nil {
		return err
	}
	dir, err := cli.configDir()
	if err != nil {
		return err
	}
	cfg, err := loadClientConfig(dir)
	if err != nil {
		return err
	}
	r := &initRun{cmd: c, cl: cl, dir: dir, cfg: cfg, mode: "connector", out: cli.out,
		tokenAt: filepath.Join(dir, "agents", c.Handle+".token")}
	if c.Inbox {
		r.mode = "inbox"
	}
	if err := r.plan(ctx); err != nil {
		return err
	}
	out := cli.out
	if len(r.steps) == 0 {
		fmt.Fprintf(out, "agent %s is set up already: nothing to change\n", c.Handle)
		r.summary(out)
		return nil
	}
	if c.DryRun {
		fmt.Fprintln(out, "switchboard init would:")
		for _, s := range r.steps {
			fmt.Fprintf(out, "  - %s\n", s.say)
		}
		return nil
	}
	for _, s := range r.steps {
		if err := s.do(ctx); err != nil {
			return fmt.Errorf("%s: %w", s.say, err)
		}
		fmt.Fprintf(out, "done: %s\n", s.say)
	}
	r.summary(out)
	return nil
}

// validate checks that the flags make one agent.
func (c *InitCmd) validate() error {
	if c.Exec == "" && c.Forward == "" && !c.Inbox {
		return errors.New("say how the agent works: --exec 'COMMAND', --forward URL or --inbox")
	}
	if (c.Wake != "" || c.Preset != "") && !c.Inbox {
		return errors.New("--wake and --preset go with --inbox: a connector agent holds its connection and needs no wake")
	}
	if c.Preset != "" && c.Wake == "" {
		return errors.New("--preset needs --wake URL")
	}
	if c.Install && c.Inbox {
		return errors.New("--install runs the connector of an --exec or --forward agent; an inbox agent has none")
	}
	return nil
}

// plan reads what exists and lists the steps that are missing.
func (r *initRun) plan(ctx context.Context) error {
	c := r.cmd
	var g ownerapi.Agent
	err := r.cl.do(ctx, "GET", "/agents/"+pathEscape(c.Handle), nil, &g)
	var ae *apiError
	switch {
	case errors.As(err, &ae) && ae.Status == http.StatusNotFound:
		r.add(fmt.Sprintf("create the %s agent %s on %s", r.mode, c.Handle, r.cl.base), r.create)
		r.newToken = true
	case err != nil:
		return err
	case g.Mode != r.mode:
		return fmt.Errorf("agent %s exists in mode %s, not %s: change it with  switchboard agent update %s --mode %s  or choose another handle", c.Handle, g.Mode, r.mode, c.Handle, r.mode)
	default:
		r.agent = &g
		if !fileExists(r.tokenAt) {
			r.add(fmt.Sprintf("give agent %s a new agent token (none is saved in %s; whoever uses the old one is refused)", c.Handle, r.tokenAt), r.rotate)
			r.newToken = true
		}
	}
	// Every agent keeps its agent token: a connector connects with it,
	// and any agent sends on the network with it.
	r.cfgWant(r.tokenAt)
	if c.Wake != "" {
		if err := r.planWake(ctx); err != nil {
			return err
		}
	}
	if c.Install {
		r.planInstall()
	}
	return r.planPeer(ctx)
}

// add appends a step.
func (r *initRun) add(say string, do func(context.Context) error) {
	r.steps = append(r.steps, initStep{say, do})
}

// cfgWant adds the step that saves the client config, when it differs.
func (r *initRun) cfgWant(tokenFile string) {
	want := clientConfig{Server: r.cl.base, Agent: r.cmd.Handle, AgentTokenFile: tokenFile}
	if *r.cfg == want {
		return
	}
	r.add(fmt.Sprintf("save the client config in %s (server %s, agent %s): the commands that act for an agent default to it", filepath.Join(r.dir, clientFile), want.Server, want.Agent),
		func(context.Context) error { *r.cfg = want; return r.cfg.save(r.dir) })
}

// create creates the agent and keeps its token.
func (r *initRun) create(ctx context.Context) error {
	c := r.cmd
	body := ownerapi.AgentRequest{Handle: &c.Handle, Mode: &r.mode}
	if c.Name != "" {
		body.Name = &c.Name
	}
	if c.Description != "" {
		body.Description = &c.Description
	}
	var g ownerapi.Agent
	if err := r.cl.do(ctx, "POST", "/agents", body, &g); err != nil {
		return err
	}
	r.agent = &g
	return r.keepToken(g.AgentToken)
}

// rotate gives the agent a new token and keeps it.
func (r *initRun) rotate(ctx context.Context) error {
	var t ownerapi.AgentTokenRotation
	if err := r.cl.do(ctx, "POST", "/agents/"+pathEscape(r.cmd.Handle)+"/agent-token", nil, &t); err != nil {
		return err
	}
	return r.keepToken(t.AgentToken)
}

// keepToken writes the agent's token in its 0600 file (through a
// temporary file: a saved token is replaced only by a whole new one).
func (r *initRun) keepToken(token string) error {
	if token == "" {
		return errors.New("the server returned no agent token")
	}
	r.token = token
	return atomicfile.Write(r.tokenAt, []byte(token+"\n"), 0o600, 0o700)
}

// planWake adds the step that sets the wake webhook, unless it is set to
// the same URL and preset.
func (r *initRun) planWake(ctx context.Context) error {
	c := r.cmd
	preset := c.Preset
	if preset == "" {
		preset = "generic"
	}
	if r.agent != nil {
		var w ownerapi.WakeConfig
		err := r.cl.do(ctx, "GET", "/agents/"+pathEscape(c.Handle)+"/wake", nil, &w)
		var ae *apiError
		switch {
		case err == nil && w.URL == c.Wake && w.Preset == preset:
			return nil
		case err != nil && !(errors.As(err, &ae) && ae.Status == http.StatusNotFound):
			return err
		}
	}
	r.add(fmt.Sprintf("set the wake webhook of %s to %s (preset %s)", c.Handle, c.Wake, preset), func(ctx context.Context) error {
		body := ownerapi.WakeUpdate{URL: &c.Wake, Preset: &preset}
		return r.cl.do(ctx, "PUT", "/agents/"+pathEscape(c.Handle)+"/wake", body, nil)
	})
	return nil
}

// planInstall adds the step that installs the connector's unit, unless
// the same unit is installed.
func (r *initRun) planInstall() {
	unit := r.unit()
	p, err := unit.unitPaths()
	if err == nil {
		exe, xerr := executable()
		if cur, rerr := os.ReadFile(p.unit); xerr == nil && rerr == nil && string(cur) == unit.unitText(exe, []string{r.cl.base}, p) && fileExists(p.env) && !r.newToken {
			return // installed, and the token it holds was not changed by this run
		}
	}
	r.add(fmt.Sprintf("install the connector of %s as the systemd user service switchboard-connect-%s", r.cmd.Handle, r.cmd.Handle), func(context.Context) error {
		u := r.unit()
		if u.Token == "" {
			b, err := os.ReadFile(r.tokenAt)
			if err != nil {
				return err
			}
			u.Token = strings.TrimSpace(string(b))
		}
		if err := u.writeUnit(r.out, []string{r.cl.base}); err != nil {
			return err
		}
		r.start("switchboard-connect-" + r.cmd.Handle + ".service")
		return nil
	})
}

// start starts the user unit with systemctl, or says why it could not
// (the commands writeUnit printed then start it).
func (r *initRun) start(name string) {
	for _, args := range [][]string{{"--user", "daemon-reload"}, {"--user", "enable", "--now", name}} {
		out, err := exec.Command("systemctl", args...).CombinedOutput()
		if err != nil {
			fmt.Fprintf(r.out, "could not start it (systemctl %s: %v %s): run the commands above\n", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
			return
		}
	}
	fmt.Fprintf(r.out, "started %s\n", name)
}

// unit is the connect command that the service runs.
func (r *initRun) unit() *ConnectCmd {
	return &ConnectCmd{Token: r.token, Exec: r.cmd.Exec, Forward: r.cmd.Forward, Install: true, Name: r.cmd.Handle,
		Timeout: defaultTaskTimeout, Concurrency: defaultConcurrency, LogLevel: "info", LogFormat: "text"}
}

// planPeer adds the step that issues a first peer token, when the agent
// has no active one.
func (r *initRun) planPeer(ctx context.Context) error {
	if r.agent != nil {
		var all []ownerapi.Token
		if err := r.cl.do(ctx, "GET", "/agents/"+pathEscape(r.cmd.Handle)+"/tokens", nil, &all); err != nil {
			return err
		}
		for _, t := range all {
			if t.Active {
				return nil
			}
		}
	}
	r.add(fmt.Sprintf("issue a peer token %q for a first peer", r.cmd.FirstPeer), func(ctx context.Context) error {
		var t ownerapi.Token
		if err := r.cl.do(ctx, "POST", "/agents/"+pathEscape(r.cmd.Handle)+"/tokens", ownerapi.TokenIssue{Label: r.cmd.FirstPeer}, &t); err != nil {
			return err
		}
		r.peer = t.Token
		return nil
	})
	return nil
}

// summary prints where the agent is and what to do next.
func (r *initRun) summary(out io.Writer) {
	c := r.cmd
	if r.agent != nil {
		fmt.Fprintf(out, "address:    %s\nagent card: %s\n", r.agent.Address, r.agent.AgentCard)
	}
	switch {
	case r.mode == "connector" && c.Install:
		fmt.Fprintf(out, "connector:  switchboard-connect-%s.service (systemctl --user status switchboard-connect-%s)\n", c.Handle, c.Handle)
	case r.mode == "connector":
		how := "--exec " + shellQuote(c.Exec)
		if c.Forward != "" {
			how = "--forward " + shellQuote(c.Forward)
		}
		fmt.Fprintf(out, "connector:  run  switchboard connect %s  (it reads the agent token from %s; --install makes it a service)\n", how, r.tokenAt)
	default:
		fmt.Fprintf(out, "inbox:      switchboard inbox  lists what waits; switchboard reply TASK --text '...' answers\n")
		fmt.Fprintf(out, "network:    switchboard send and switchboard directory use the agent token saved in %s\n", r.tokenAt)
	}
	if r.peer != "" {
		fmt.Fprintf(out, "peer token for %q (shown once):\n\n  %s\n\n", c.FirstPeer, r.peer)
		fmt.Fprintf(out, "try it:\n  curl -s %s -H 'Authorization: Bearer %s' \\\n    -d '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendMessage\",\"params\":{\"message\":{\"messageId\":\"hello-1\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"hello\"}]}}}'\n",
			strings.TrimSuffix(r.agentAddress(), "/"), r.peer)
	}
	fmt.Fprintf(out, "check it:   switchboard status\n")
}

// agentAddress is the agent's address.
func (r *initRun) agentAddress() string {
	if r.agent != nil && r.agent.Address != "" {
		return r.agent.Address
	}
	return r.cl.base + "/a/" + r.cmd.Handle
}

// fileExists reports whether path names a file.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
