package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/switchboard-dev/switchboard/ownerapi"
)

// MCPGrantsCmd groups the commands of OAuth grants: the MCP tokens that
// MCP clients got through the consent page (docs/mcp.md, "OAuth").
type MCPGrantsCmd struct {
	List   MCPGrantsListCmd   `cmd:"" default:"1" help:"List the OAuth grants of your agents (the default)."`
	Revoke MCPGrantsRevokeCmd `cmd:"" help:"End an OAuth grant at once, by its id: its access and refresh tokens stop working."`
}

// MCPGrantsListCmd lists OAuth grants.
type MCPGrantsListCmd struct{}

// Run lists the grants: the MCP tokens of GET /mcp-tokens that belong to
// an OAuth grant.
func (c *MCPGrantsListCmd) Run(ctx context.Context, cli *CLI) error {
	cl, err := newClient(cli)
	if err != nil {
		return err
	}
	var all []ownerapi.MCPToken
	if printed, err := cl.call(ctx, "GET", "/mcp-tokens", nil, &all); err != nil || printed {
		return err
	}
	tw := tabwriter.NewWriter(cl.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGENT\tCLIENT\tLABEL\tCLIENT ID\tCREATED\tLAST USED")
	for _, t := range all {
		if t.Grant == nil {
			continue
		}
		used := "never"
		if t.LastUsedAt != nil {
			used = t.LastUsedAt.Format(time.RFC3339)
		}
		agent := t.Agent
		if agent == "" {
			agent = "account: " + strings.Join(t.Agents, ",")
		}
		name := t.Grant.ClientName
		if name == "" {
			name = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%q\t%s\t%s\t%s\t%s\n", t.ID, agent, name, t.Label, t.Grant.ClientID,
			t.Grant.CreatedAt.Format(time.RFC3339), used)
	}
	return tw.Flush()
}

// MCPGrantsRevokeCmd ends an OAuth grant.
type MCPGrantsRevokeCmd struct {
	ID string `arg:"" help:"Id of the grant (switchboard mcp grants): its MCP token's, which changes when the client refreshes it."`
}

// Run revokes the grant's MCP token, which ends the grant.
func (c *MCPGrantsRevokeCmd) Run(ctx context.Context, cli *CLI) error {
	return revokeMCPToken(ctx, cli, c.ID, "OAuth grant")
}
