package main

import (
	"context"
	"fmt"
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
	return listMCPTokens(ctx, cli, "ID\tAGENT\tCLIENT\tLABEL\tCLIENT ID\tCREATED\tLAST USED", func(t ownerapi.MCPToken, agent, used string) string {
		if t.Grant == nil {
			return ""
		}
		name := t.Grant.ClientName
		if name == "" {
			name = "-"
		}
		return fmt.Sprintf("%s\t%s\t%q\t%s\t%s\t%s\t%s", t.ID, agent, name, t.Label, t.Grant.ClientID,
			t.Grant.CreatedAt.Format(time.RFC3339), used)
	})
}

// MCPGrantsRevokeCmd ends an OAuth grant.
type MCPGrantsRevokeCmd struct {
	ID string `arg:"" help:"Id of the grant (switchboard mcp grants): its MCP token's, which changes when the client refreshes it."`
}

// Run revokes the grant's MCP token, which ends the grant.
func (c *MCPGrantsRevokeCmd) Run(ctx context.Context, cli *CLI) error {
	return revokeMCPToken(ctx, cli, c.ID, "OAuth grant")
}
