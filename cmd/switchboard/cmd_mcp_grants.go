package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
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
	Grant string `arg:"" name:"grant" help:"The grant (switchboard mcp grants): its label (mcp-…, which stays the grant's while the client refreshes its tokens), or its current id."`
}

// Run finds the grant by label or id among the MCP tokens that belong to
// an OAuth grant, and revokes its current token, which ends the grant. A
// refresh between the two (the id changed) is read again, once.
func (c *MCPGrantsRevokeCmd) Run(ctx context.Context, cli *CLI) error {
	cl, err := newClient(cli)
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		var all []ownerapi.MCPToken
		if err := cl.do(ctx, "GET", "/mcp-tokens", nil, &all); err != nil {
			return err
		}
		var found []ownerapi.MCPToken
		for _, t := range all {
			if t.Grant != nil && (t.ID == c.Grant || t.Label == c.Grant) {
				found = append(found, t)
			}
		}
		switch {
		case len(found) == 0:
			return fmt.Errorf("no OAuth grant has the label or id %q (see switchboard mcp grants; tokens you created are revoked with switchboard mcp token revoke)", c.Grant)
		case len(found) > 1:
			return fmt.Errorf("%d grants of different agents have the label %q: give the grant's id (switchboard mcp grants)", len(found), c.Grant)
		}
		var res ownerapi.MCPTokenRevoked
		printed, err := cl.call(ctx, "DELETE", "/mcp-tokens/"+pathEscape(found[0].ID), nil, &res)
		var ae *apiError
		if errors.As(err, &ae) && ae.Status == http.StatusNotFound && attempt == 0 {
			continue // refreshed meanwhile: its token has a new id
		}
		if err != nil || printed {
			return err
		}
		fmt.Fprintf(cl.out, "revoked OAuth grant %s (%s)\n", found[0].Label, res.ID)
		return nil
	}
}
