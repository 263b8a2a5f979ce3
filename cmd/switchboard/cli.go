package main

import (
	"io"
	"os"
	"path/filepath"
)

// CLI is the command line: global flags, then one subcommand. Every flag
// has an environment variable; flags win over the environment, and the
// environment over defaults.
type CLI struct {
	Data       string `name:"data" env:"SWITCHBOARD_DATA" default:"${default_data}" type:"path" help:"Data directory (database, owner token file)."`
	OwnerToken string `name:"owner-token" env:"SWITCHBOARD_OWNER_TOKEN" help:"Owner token. serve: preset the operator's token. Other commands: authenticate (default: the token file in the data directory)."`
	Server     string `name:"server" env:"SWITCHBOARD_URL" help:"URL of the Switchboard server, for management commands (default: the one switchboard init saved, else http://127.0.0.1:8080)."`
	JSON       bool   `name:"json" env:"SWITCHBOARD_JSON" help:"Print raw JSON answers."`
	ConfigDir  string `name:"config-dir" env:"SWITCHBOARD_CONFIG_DIR" type:"path" help:"Client config directory (peers.json); default $XDG_CONFIG_HOME/switchboard or ~/.config/switchboard."`

	Serve     ServeCmd     `cmd:"" help:"Run a Switchboard server."`
	Deploy    DeployCmd    `cmd:"" help:"Make this Linux machine a public deployment at https://DOMAIN in one command: check DNS and the ports, install and start the systemd unit of serve --domain, wait for its certificate. --dry-run shows every step and changes nothing."`
	Init      InitCmd      `cmd:"" help:"Set an agent up from nothing to reachable: create it (or reuse it), save the client config, wire its wake or install its connector, issue a first peer token. Run twice, it changes nothing."`
	Status    StatusCmd    `cmd:"" help:"Show how an agent stands (the one init configured, or --agent): reachable or not, what waits, its wakes and tokens, and the one next step when something is missing."`
	Account   AccountCmd   `cmd:"" help:"Manage owner accounts (operator only)."`
	Whoami    WhoamiCmd    `cmd:"" help:"Show the account the owner token belongs to."`
	Agent     AgentCmd     `cmd:"" help:"Manage agents."`
	Token     TokenCmd     `cmd:"" help:"Manage peer tokens of an agent."`
	Front     FrontCmd     `cmd:"" help:"Front agents (an A2A server that already runs at an https URL): the upstream's credentials, its status, and a check of the path."`
	Pairing   PairingCmd   `cmd:"" help:"Decide peers' pairing requests (peers that ask for their own token with switchboard pair)."`
	Pair      PairCmd      `cmd:"" help:"Ask a remote agent for a peer token (OAuth device flow): show the code to its owner, wait for the approval, store the token under an alias."`
	Inbox     InboxCmd     `cmd:"" help:"List tasks waiting for your agents."`
	Show      ShowCmd      `cmd:"" help:"Show one task."`
	Reply     ReplyCmd     `cmd:"" help:"Answer a task."`
	Export    ExportCmd    `cmd:"" help:"Write the deployment's data (the database in --data, or --database) as JSON lines, from one consistent snapshot; servers may keep running."`
	Import    ImportCmd    `cmd:"" help:"Load an export into an empty database (SQLite in --data, or --database), all or nothing. Stop the servers first."`
	Backup    BackupCmd    `cmd:"" help:"Write a consistent copy of the SQLite deployment in --data (the database, its secret key and owner token file) to one file, while servers keep running."`
	Restore   RestoreCmd   `cmd:"" help:"Write a backup into --data, whose servers must be stopped; a database already there is replaced only with --force."`
	SecretKey SecretKeyCmd `cmd:"" name:"secret-key" help:"Manage the keys that seal stored secrets (webhook secrets, wake keys, push credentials, fronts' upstream credentials)."`
	Peers     PeersCmd     `cmd:"" help:"Remember remote agents (and their tokens) by alias."`
	Send      SendCmd      `cmd:"" help:"Send a message from one of your agents to any A2A agent (URL, alias or handle on this server) with --agent; without it, as an agent of the network with its agent token, by name or by discovery (--community, --skill)."`
	Outbox    OutboxCmd    `cmd:"" help:"List what your agents sent and the state of the answers."`
	Poll      PollCmd      `cmd:"" help:"Fetch the remote task of a sent message again and record it."`
	History   HistoryCmd   `cmd:"" help:"Show a conversation (contextId) of an agent in both directions."`
	Audit     AuditCmd     `cmd:"" help:"List the audit log, newest first: sign-ins, tokens, agents, approvals, communities, pairings, MCP consents, accounts, secret keys, fronts' credentials (the operator: every account's; an owner: its own)."`
	Wake      WakeCmd      `cmd:"" help:"Wake webhooks: how an agent that sleeps learns that work waits in its inbox."`
	Community CommunityCmd `cmd:"" help:"Communities: agents that send each other work; each has an A2A address {server}/c/NAME."`
	Directory DirectoryCmd `cmd:"" help:"List the agents of the network you can see, live or not (an agent token: the other members of its communities)."`
	MCP       MCPCmd       `cmd:"" name:"mcp" help:"MCP: every agent's address as a remote MCP server; mint and revoke its tokens."`
	Connect   ConnectCmd   `cmd:"" help:"Connect an agent to its server (--server, repeated or comma-separated for several) and work on its tasks with --exec or --forward, and on live sessions with --session-exec; --install makes it a systemd service."`
	Chat      ChatCmd      `cmd:"" help:"Open a live session from an agent (--token) to another one that shares a community with it: each line of stdin is a frame sent, each frame received is printed."`
	Health    HealthCmd    `cmd:"" help:"Ask the server whether it is ready (GET /readyz): exit status 0 when it is. A container's health check."`
	Version   VersionCmd   `cmd:"" help:"Print the version, commit and build date (with --json, as JSON)."`

	out    io.Writer // where commands print; not a flag
	errOut io.Writer // where commands print notes and warnings
	stdin  io.Reader // where commands read secrets and text from
}

// defaultDataDir is $XDG_DATA_HOME/switchboard, ~/.local/share/switchboard,
// or ./switchboard-data when there is no home directory.
func defaultDataDir() string {
	if x := os.Getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "switchboard")
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		return filepath.Join(home, ".local", "share", "switchboard")
	}
	return "switchboard-data"
}
