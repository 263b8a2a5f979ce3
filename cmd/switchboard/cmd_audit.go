package main

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/switchboard-dev/switchboard/ownerapi"
)

// AuditCmd lists the audit log: the operator's token reads every entry,
// an owner's those of its account (docs/operating.md, "Audit log").
type AuditCmd struct {
	Since  string `name:"since" help:"Only entries since this time (RFC 3339) or this long ago (36h, 7d)."`
	Actor  string `name:"actor" help:"Only entries by this actor: an account id, an agent handle, a client id, or a kind (operator, owner, agent, peer, mcp_client, anonymous, host)."`
	Target string `name:"target" help:"Only entries on this target: an agent handle, an account id, a community, a token (peer:LABEL), or a kind (agent, account, token, community, pairing, mcp_grant, secret_key)."`
	Limit  int    `name:"limit" default:"50" help:"Show at most N entries, newest first (the server gives 200 a page; more pages are read as needed)."`
}

// Run prints the entries, newest first.
func (c *AuditCmd) Run(ctx context.Context, cli *CLI) error {
	if c.Limit < 1 {
		return fmt.Errorf("--limit must be at least 1")
	}
	cl, err := newClient(cli)
	if err != nil {
		return err
	}
	entries := []ownerapi.AuditEntry{}
	cursor := ""
	for len(entries) < c.Limit {
		q := url.Values{}
		for k, v := range map[string]string{"since": c.Since, "actor": c.Actor, "target": c.Target, "cursor": cursor} {
			if v != "" {
				q.Set(k, v)
			}
		}
		q.Set("limit", strconv.Itoa(min(c.Limit-len(entries), 200)))
		var p ownerapi.AuditPage
		if err := cl.do(ctx, "GET", "/audit?"+q.Encode(), nil, &p); err != nil {
			return err
		}
		entries = append(entries, p.Entries...)
		if cursor = p.Next; cursor == "" {
			break
		}
	}
	if cl.json {
		return cl.printJSON(entries)
	}
	if len(entries) == 0 {
		fmt.Fprintln(cl.out, "no audit entries")
		return nil
	}
	tw := cl.table("TIME\tACTION\tOUTCOME\tACTOR\tTARGET\tFROM\tDETAIL")
	for _, e := range entries {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.At.Format(time.RFC3339), e.Action, e.Outcome,
			join(e.ActorKind, e.ActorID), join(e.TargetKind, e.TargetID), dash(e.ClientAddr), e.Detail)
	}
	return tw.Flush()
}

// join names a kind and an id as "kind id", or the kind alone.
func join(kind, id string) string {
	if id == "" {
		return kind
	}
	return kind + " " + id
}
