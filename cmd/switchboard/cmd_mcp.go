package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/ownerapi"
)

// MCPCmd groups the MCP commands (docs/mcp.md).
type MCPCmd struct {
	Token  MCPTokenCmd  `cmd:"" help:"Manage MCP tokens: each opens one agent's MCP endpoint ({address}/mcp) and nothing else."`
	Grants MCPGrantsCmd `cmd:"" help:"List the OAuth grants of MCP clients (the applications you allowed), or revoke one."`
}

// MCPTokenCmd groups the MCP token commands.
type MCPTokenCmd struct {
	Create MCPTokenCreateCmd `cmd:"" help:"Mint an MCP token for an agent (shown once)."`
	List   MCPTokenListCmd   `cmd:"" help:"List the active MCP tokens of your agents (never the secrets)."`
	Revoke MCPTokenRevokeCmd `cmd:"" help:"Revoke an MCP token at once, by its id."`
}

// MCPTokenCreateCmd mints an MCP token.
type MCPTokenCreateCmd struct {
	Agent   []string `name:"agent" required:"" help:"Handle or id of the agent (with --account: repeat for each agent the token acts for)."`
	Label   string   `name:"label" default:"mcp" help:"Name of the client the token is for (A-Z a-z 0-9 _ -)."`
	Account bool     `name:"account" help:"An account token for {server}/mcp: its tools take the agent to act for (one of --agent), and it may create one agent."`
}

// Run mints the token and prints how to use it.
func (c *MCPTokenCreateCmd) Run(ctx context.Context, cli *CLI) error {
	if !c.Account && len(c.Agent) != 1 {
		return fmt.Errorf("an agent's token is for one --agent; for several, mint an account token with --account")
	}
	cl, err := newClient(cli)
	if err != nil {
		return err
	}
	var t ownerapi.MCPToken
	var printed bool
	if c.Account {
		printed, err = cl.call(ctx, "POST", "/mcp-tokens", ownerapi.AccountMCPTokenIssue{Label: c.Label, Agents: c.Agent}, &t)
	} else {
		printed, err = cl.call(ctx, "POST", "/agents/"+pathEscape(c.Agent[0])+"/mcp-tokens", ownerapi.MCPTokenIssue{Label: c.Label}, &t)
	}
	if err != nil || printed {
		return err
	}
	if c.Account {
		t.Agent = "switchboard"
		fmt.Fprintf(cl.out, "account MCP token %s for %s, labelled %q (shown once; only its hash is stored):\n\n  %s\n\n",
			t.ID, strings.Join(t.Agents, ", "), t.Label, t.Token)
		fmt.Fprintf(cl.out, "MCP endpoint: %s\n\nClaude Code:\n\n  claude mcp add --transport http %s %s --header \"Authorization: Bearer %s\"\n",
			t.MCPURL, t.Agent, t.MCPURL, t.Token)
		return nil
	}
	fmt.Fprintf(cl.out, "MCP token %s for %s, labelled %q (shown once; only its hash is stored):\n\n  %s\n\n", t.ID, t.Agent, t.Label, t.Token)
	fmt.Fprintf(cl.out, "MCP endpoint: %s\n\nClaude Code:\n\n  claude mcp add --transport http %s %s --header \"Authorization: Bearer %s\"\n",
		t.MCPURL, t.Agent, t.MCPURL, t.Token)
	return nil
}

// MCPTokenListCmd lists MCP tokens.
type MCPTokenListCmd struct{}

// Run lists the tokens.
func (c *MCPTokenListCmd) Run(ctx context.Context, cli *CLI) error {
	return listMCPTokens(ctx, cli, "ID\tAGENT\tLABEL\tCREATED\tLAST USED", func(t ownerapi.MCPToken, agent, used string) string {
		return fmt.Sprintf("%s\t%s\t%s\t%s\t%s", t.ID, agent, t.Label, t.CreatedAt.Format(time.RFC3339), used)
	})
}

// listMCPTokens prints a table of the MCP tokens of GET /mcp-tokens (or
// their JSON with --json): header, then each token's row as row makes it
// from the token, the agent it acts for and its last use; a row of ""
// leaves the token out.
func listMCPTokens(ctx context.Context, cli *CLI, header string, row func(t ownerapi.MCPToken, agent, used string) string) error {
	return ownerCall(ctx, cli, "GET", "/mcp-tokens", nil, func(cl *client, all *[]ownerapi.MCPToken) error {
		tw := cl.table(header)
		for _, t := range *all {
			used := "never"
			if t.LastUsedAt != nil {
				used = t.LastUsedAt.Format(time.RFC3339)
			}
			agent := t.Agent
			if agent == "" {
				agent = "account: " + strings.Join(t.Agents, ",")
			}
			if line := row(t, agent, used); line != "" {
				fmt.Fprintln(tw, line)
			}
		}
		return tw.Flush()
	})
}

// MCPTokenRevokeCmd revokes an MCP token.
type MCPTokenRevokeCmd struct {
	ID string `arg:"" help:"Id of the token (switchboard mcp token list)."`
}

// Run revokes the token (an OAuth grant's ends the grant).
func (c *MCPTokenRevokeCmd) Run(ctx context.Context, cli *CLI) error {
	return ownerCall(ctx, cli, "DELETE", "/mcp-tokens/"+pathEscape(c.ID), nil, func(cl *client, res *ownerapi.MCPTokenRevoked) error {
		fmt.Fprintf(cl.out, "revoked MCP token %s\n", res.ID)
		return nil
	})
}
