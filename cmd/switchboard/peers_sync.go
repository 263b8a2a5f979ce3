package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/switchboard-dev/switchboard/ownerapi"
)

// PeersSyncCmd uploads aliases of the client config to the server for one
// agent (PUT /agents/{ref}/peers/{alias}): the MCP tools, which have no
// client config, send to them with the tokens the server then holds.
type PeersSyncCmd struct {
	Agent   string   `name:"agent" help:"The agent (handle or id) that will send to the aliases; default: the one switchboard init configured."`
	Aliases []string `arg:"" optional:"" name:"alias" help:"The aliases to sync; default: every alias of the client config."`
}

// Run uploads the aliases. An alias without a token (its variable empty)
// is not uploaded; the others still are.
func (c *PeersSyncCmd) Run(ctx context.Context, cli *CLI) error {
	agent, err := syncAgent(cli, c.Agent)
	if err != nil {
		return err
	}
	dir, err := cli.configDir()
	if err != nil {
		return err
	}
	cfg, err := loadPeers(dir)
	if err != nil {
		return err
	}
	aliases := c.Aliases
	if len(aliases) == 0 {
		for a := range cfg.Peers {
			aliases = append(aliases, a)
		}
		sort.Strings(aliases)
	}
	if len(aliases) == 0 {
		return errors.New("no aliases in the client config; add one with  switchboard peers add ALIAS URL --token-stdin")
	}
	cl, err := newClient(cli)
	if err != nil {
		return err
	}
	var failed []string
	var synced []ownerapi.OutboundPeer
	for _, alias := range aliases {
		p, ok := cfg.Peers[alias]
		var tok string
		if ok {
			tok = p.token()
		}
		switch {
		case !ok:
			fmt.Fprintf(cli.errOut, "switchboard: %s: no such alias in %s\n", alias, peersFile)
			failed = append(failed, alias)
			continue
		case tok == "":
			fmt.Fprintf(cli.errOut, "switchboard: %s: no token (%s); not synced\n", alias, p.tokenStatus())
			failed = append(failed, alias)
			continue
		}
		var got ownerapi.OutboundPeer
		err := cl.do(ctx, "PUT", "/agents/"+pathEscape(agent)+"/peers/"+pathEscape(alias), ownerapi.OutboundPeerPut{URL: p.URL, Token: tok}, &got)
		if err != nil {
			fmt.Fprintf(cli.errOut, "switchboard: %s: %v\n", alias, err)
			failed = append(failed, alias)
			continue
		}
		synced = append(synced, got)
		if !cl.json {
			fmt.Fprintf(cli.out, "synced %s → %s for %s  token %s\n", alias, got.URL, agent, fingerprint(tok))
		}
	}
	if cl.json {
		if synced == nil {
			synced = []ownerapi.OutboundPeer{}
		}
		if err := cl.printJSON(synced); err != nil {
			return err
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d aliases not synced: %v", len(failed), len(aliases), failed)
	}
	return nil
}

// syncAgent is the agent the sync commands act for: --agent, else the
// one switchboard init configured.
func syncAgent(cli *CLI, agent string) (string, error) {
	if agent == "" {
		agent = cli.defaultAgent()
	}
	if agent == "" {
		return "", errors.New("name the agent with --agent (handle or id)")
	}
	return agent, nil
}

// PeersSyncedCmd lists the aliases synced for an agent.
type PeersSyncedCmd struct {
	Agent string `name:"agent" help:"The agent (handle or id); default: the one switchboard init configured."`
}

// Run lists them (GET /agents/{ref}/peers).
func (c *PeersSyncedCmd) Run(ctx context.Context, cli *CLI) error {
	agent, err := syncAgent(cli, c.Agent)
	if err != nil {
		return err
	}
	cl, err := newClient(cli)
	if err != nil {
		return err
	}
	var list ownerapi.OutboundPeers
	if err := cl.do(ctx, "GET", "/agents/"+pathEscape(agent)+"/peers", nil, &list); err != nil {
		return err
	}
	if cl.json {
		return cl.printJSON(list)
	}
	if len(list.Peers) == 0 {
		fmt.Fprintf(cli.out, "no aliases synced for %s; sync them with  switchboard peers sync --agent %s\n", list.Agent, list.Agent)
		return nil
	}
	for _, p := range list.Peers {
		tok := "token kept"
		if !p.HasToken {
			tok = "token lost (the server's keys changed): sync it again"
		}
		fmt.Fprintf(cli.out, "%s  %s  %s  synced %s\n", p.Alias, p.URL, tok, p.SyncedAt.Format(time.RFC3339))
	}
	return nil
}

// PeersUnsyncCmd removes an alias synced for an agent.
type PeersUnsyncCmd struct {
	Agent string `name:"agent" help:"The agent (handle or id); default: the one switchboard init configured."`
	Alias string `arg:"" help:"The alias to remove from the server (the client config keeps it)."`
}

// Run removes it (DELETE /agents/{ref}/peers/{alias}).
func (c *PeersUnsyncCmd) Run(ctx context.Context, cli *CLI) error {
	agent, err := syncAgent(cli, c.Agent)
	if err != nil {
		return err
	}
	cl, err := newClient(cli)
	if err != nil {
		return err
	}
	var out ownerapi.OutboundPeerDeleted
	if err := cl.do(ctx, "DELETE", "/agents/"+pathEscape(agent)+"/peers/"+pathEscape(c.Alias), nil, &out); err != nil {
		return err
	}
	if cl.json {
		return cl.printJSON(out)
	}
	fmt.Fprintf(cli.out, "unsynced %s for %s\n", c.Alias, agent)
	return nil
}
