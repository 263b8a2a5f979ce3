package main

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboard-dev/switchboard/ownerapi"
)

// TokenCmd groups the peer token commands.
type TokenCmd struct {
	Issue  TokenIssueCmd  `cmd:"" help:"Issue a peer token: whoever holds it may call the agent's address."`
	List   TokenListCmd   `cmd:"" help:"List an agent's peer tokens (labels only)."`
	Revoke TokenRevokeCmd `cmd:"" help:"Revoke a peer token at once."`
}

// TokenIssueCmd issues a peer token.
type TokenIssueCmd struct {
	Agent  string `name:"agent" required:"" help:"Handle or id of the agent."`
	Label  string `arg:"" help:"Name of the peer the token is for (A-Z a-z 0-9 _ -)."`
	Rotate bool   `name:"rotate" help:"Replace an active token with the same label."`
}

// Run issues the token.
func (c *TokenIssueCmd) Run(ctx context.Context, cli *CLI) error {
	body := ownerapi.TokenIssue{Label: c.Label, Rotate: c.Rotate}
	return ownerCall(ctx, cli, "POST", "/agents/"+pathEscape(c.Agent)+"/tokens", body, func(cl *client, t *ownerapi.Token) error {
		fmt.Fprintf(cl.out, "peer token for %q (shown once; only its hash is stored):\n\n  %s\n\n", t.Label, t.Token)
		fmt.Fprintf(cl.out, "address:    %s\nagent card: %s\n", t.Address, t.AgentCard)
		fmt.Fprintf(cl.out, "the peer sends it as  Authorization: Bearer <token>\n")
		return nil
	})
}

// TokenListCmd lists peer tokens.
type TokenListCmd struct {
	Agent string `name:"agent" required:"" help:"Handle or id of the agent."`
	All   bool   `name:"all" help:"Include revoked tokens."`
}

// Run lists the tokens.
func (c *TokenListCmd) Run(ctx context.Context, cli *CLI) error {
	path := withAll("/agents/"+pathEscape(c.Agent)+"/tokens", c.All)
	return ownerCall(ctx, cli, "GET", path, nil, func(cl *client, all *[]ownerapi.Token) error {
		tw := cl.table("LABEL\tSTATE\tCREATED")
		for _, t := range *all {
			state := "active"
			if t.RevokedAt != nil {
				state = "revoked " + t.RevokedAt.Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Label, state, t.CreatedAt.Format(time.RFC3339))
		}
		return tw.Flush()
	})
}

// TokenRevokeCmd revokes a peer token.
type TokenRevokeCmd struct {
	Agent string `name:"agent" required:"" help:"Handle or id of the agent."`
	Label string `arg:"" help:"Label of the token."`
}

// Run revokes the token.
func (c *TokenRevokeCmd) Run(ctx context.Context, cli *CLI) error {
	return ownerDone(ctx, cli, "DELETE", "/agents/"+pathEscape(c.Agent)+"/tokens/"+pathEscape(c.Label), nil, func(cl *client) error {
		fmt.Fprintf(cl.out, "revoked the token %q\n", c.Label)
		return nil
	})
}
