package main

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/alecthomas/kong"
	"github.com/switchboard-dev/switchboard/connector"
)

// ConnectCmd connects an agent to its Switchboard server over the connector
// protocol and works on the tasks sent to its address, by running a
// command or by relaying them to a local A2A server. It reconnects by
// itself; with --print-unit or --install it writes a systemd unit that
// runs it instead.
type ConnectCmd struct {
	Token          string        `name:"token" env:"SWITCHBOARD_AGENT_TOKEN" help:"The agent token (sba_…), shown when the agent was created; default: the one switchboard init saved."`
	Exec           string        `name:"exec" env:"SWITCHBOARD_EXEC" placeholder:"COMMAND" help:"Run COMMAND with sh -c for each task: the message's text parts on stdin, joined by newlines (file and data parts are dropped, with a warning in the log), the task in SWITCHBOARD_TASK_ID, SWITCHBOARD_CONTEXT_ID, SWITCHBOARD_MESSAGE_ID, SWITCHBOARD_FROM, SWITCHBOARD_PEER_ID, SWITCHBOARD_NEW_TASK; stdout is the reply, a non-zero exit fails the task with stderr's tail."`
	Forward        string        `name:"forward" env:"SWITCHBOARD_FORWARD" placeholder:"URL" help:"Relay each task as A2A JSON-RPC to the A2A server at URL (loopback or private). Its agent card decides the protocol version (1.0 or 0.3) and the endpoint's path, never the host: requests go to URL's scheme, host and port whatever the card names, and redirects to another host are not followed."`
	PublishCard    bool          `name:"publish-card" default:"true" negatable:"" help:"With --forward: publish the forward server's agent card (its name, description, skills…) at the agent's address, scrubbed of the server's URL and every host it names, under the agent's own settings; read again every 10 minutes. --no-publish-card, and any connect without --forward, forgets a card published before."`
	ForwardToken   string        `name:"forward-token" env:"SWITCHBOARD_FORWARD_TOKEN" help:"Bearer token for the --forward server; sent only to the --forward URL's scheme, host and port."`
	Timeout        time.Duration `name:"timeout" env:"SWITCHBOARD_TASK_TIMEOUT" default:"5m" help:"Longest time one task may run, from when it starts (time waiting for its turn does not count); then the command is killed (or the forwarded task canceled) and the task fails."`
	Concurrency    int           `name:"concurrency" env:"SWITCHBOARD_CONCURRENCY" default:"4" help:"Tasks worked on at once; more wait their turn, shown to their peer as submitted until they start."`
	SessionExec    string        `name:"session-exec" env:"SWITCHBOARD_SESSION_EXEC" placeholder:"COMMAND" help:"Accept the live sessions other agents open with this one (they must share a community) and run COMMAND with sh -c for each: every frame received is a line on its stdin, every line of its stdout a frame sent, as --session-framing says; the session ends when the command exits, and the command's stdin closes when the session ends. The session's id and the peer's handle and id are in SWITCHBOARD_SESSION_ID, SWITCHBOARD_SESSION_PEER, SWITCHBOARD_SESSION_PEER_ID. --session-exec cat is an echo agent. Without it, sessions are refused. It may be the only mode: the agent then takes no tasks (they wait at the server)."`
	SessionFraming string        `name:"session-framing" env:"SWITCHBOARD_SESSION_FRAMING" default:"lines" enum:"lines,json" help:"With --session-exec: how frames meet the command. lines (the default, for cat, tr, grep): each frame is a line of stdin (a JSON frame as one line of JSON), so a newline in a frame splits it into several lines; each line of stdout is a text frame. json, for frames that carry newlines: each frame is one line of JSON on stdin (a text frame a JSON string, a JSON frame its JSON); each line of stdout is JSON, a string sent as a text frame and any other value as a JSON frame; a line that is not JSON is logged and skipped."`
	SessionMax     int           `name:"session-max" env:"SWITCHBOARD_SESSION_MAX" default:"16" help:"With --session-exec: sessions run at once; more are refused as busy."`
	LogLevel       string        `name:"log-level" env:"SWITCHBOARD_LOG_LEVEL" default:"info" enum:"debug,info,warn,error" help:"Log level (logs go to stderr)."`
	LogFormat      string        `name:"log-format" env:"SWITCHBOARD_LOG_FORMAT" default:"text" enum:"text,json" help:"Log format."`

	PrintUnit bool   `name:"print-unit" help:"Print a systemd unit that runs this connect command (the token goes in an environment file, not the command line), and exit. The unit restarts it whenever it stops, except with exit status 78: the server refused the agent for good (token revoked or mistyped, agent deleted, not in connector mode)."`
	Install   bool   `name:"install" help:"Write that unit and its environment file (mode 0600, holding the token), and print the systemctl commands that start it."`
	System    bool   `name:"system" help:"With --print-unit or --install: a system unit in /etc/systemd/system rather than a user unit in ~/.config/systemd/user."`
	Name      string `name:"name" env:"SWITCHBOARD_CONNECT_NAME" default:"agent" help:"Name of the unit (switchboard-connect-NAME.service) and of its environment file; use the agent's handle."`
}

// Run connects and works until ctx ends (SIGINT, SIGTERM) or the server
// refuses the agent for good (the process then exits with exitTerminal). The global --server flag names the server;
// it may be repeated or hold several comma-separated URLs, tried in turn.
func (c *ConnectCmd) Run(ctx context.Context, cli *CLI, kctx *kong.Context) error {
	urls := serverURLs(cli.serverURL(), kctx.Args)
	if strings.TrimSpace(c.Token) == "" {
		c.Token = cli.savedAgentToken() // the one switchboard init saved, if any
	}
	if err := c.validate(); err != nil {
		return err
	}
	if c.PrintUnit || c.Install {
		return c.writeUnit(cli.out, urls)
	}
	if strings.TrimSpace(c.Token) == "" {
		return errors.New("no agent token: set SWITCHBOARD_AGENT_TOKEN or --token (it is shown when the agent is created, and by POST /agents/{id}/agent-token)")
	}
	log := newLogger(c.LogLevel, c.LogFormat)
	handler, mode := c.handler(log)
	client := &connector.Client{
		URLs: urls, Token: strings.TrimSpace(c.Token), Handler: handler, Logger: log,
		MaxConcurrent: c.Concurrency, ClientName: "switchboard-connect/" + currentBuild().Version,
	}
	if c.SessionExec != "" {
		client.Sessions = &sessionExec{command: c.SessionExec, max: c.SessionMax, framing: sessionFraming(c.SessionFraming), log: log}
	}
	log.Info("starting the connector", "servers", strings.Join(urls, ","), "mode", mode, "concurrency", c.Concurrency, "timeout", c.Timeout)
	if f, ok := handler.(*forwarder); ok {
		defer f.fw.Close() // once client.Run returned: no task is in flight
	}
	if f, ok := handler.(*forwarder); ok && c.PublishCard {
		go f.publishCards(ctx, client)
	} else {
		go forgetCard(ctx, client, log)
	}
	return client.Run(ctx)
}

// handler returns what works on each task, and the name of the mode.
func (c *ConnectCmd) handler(log *slog.Logger) (connector.Handler, string) {
	switch {
	case c.Exec != "":
		return &execHandler{command: c.Exec, timeout: c.Timeout, log: log}, "exec"
	case c.Forward != "":
		return newForwarder(c.Forward, c.ForwardToken, c.Timeout, log), "forward"
	}
	return nil, "sessions only"
}

// validate checks that exactly one way of working was chosen.
func (c *ConnectCmd) validate() error {
	switch {
	case c.Exec == "" && c.Forward == "" && c.SessionExec == "":
		return errors.New("say how to work on tasks: --exec 'COMMAND' or --forward URL (or hold only live sessions: --session-exec 'COMMAND')")
	case c.SessionExec != "" && c.SessionMax <= 0:
		return errors.New("--session-max must be at least 1")
	case c.SessionExec == "" && sessionFraming(c.SessionFraming) != framingLines:
		return errors.New("--session-framing says how --session-exec's command meets the frames: give --session-exec too")
	case c.Exec != "" && c.Forward != "":
		return errors.New("--exec and --forward exclude each other")
	case c.Timeout <= 0:
		return errors.New("--timeout must be positive")
	case c.Concurrency <= 0:
		return errors.New("--concurrency must be at least 1")
	}
	if c.Forward != "" {
		if err := checkForwardURL(c.Forward); err != nil {
			return err
		}
	}
	return nil
}

// serverURLs returns the server URLs the command line names. The global
// --server flag holds only its last value, so the raw arguments are read
// for repeated ones; each value may also hold comma-separated URLs.
func serverURLs(server string, args []string) []string {
	var values []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if v, ok := strings.CutPrefix(a, "--server="); ok {
			values = append(values, v)
		} else if a == "--server" && i+1 < len(args) {
			values = append(values, args[i+1])
			i++
		}
	}
	if len(values) < 2 {
		values = []string{server}
	}
	var urls []string
	for _, v := range values {
		for _, u := range strings.Split(v, ",") {
			if u = strings.TrimSpace(u); u != "" {
				urls = append(urls, u)
			}
		}
	}
	return urls
}

// fail reports a task failure, logging a report that did not go through.
func fail(ctx context.Context, w *connector.Work, log *slog.Logger, reason string) {
	if err := w.Fail(reason); err != nil && ctx.Err() == nil {
		log.Warn("report a failed task", "task_id", w.TaskID, "err", err)
	}
}

// errTaskTimeout is the cause of a task's context when --timeout passed.
var errTaskTimeout = errors.New("the task took longer than its timeout")
