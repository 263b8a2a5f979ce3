package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// HistoryCmd shows a conversation in both directions.
type HistoryCmd struct {
	Context string `arg:"" help:"The conversation's contextId."`
	Agent   string `name:"agent" help:"The agent (handle or id); default: each of yours that took part."`
	Peer    string `name:"peer" help:"Whose conversation (a peer token's label): two peers that chose the same contextId hold two conversations."`
	N       int    `name:"n" short:"n" default:"50" help:"Show the last N messages (at most 1000)."`
}

// Run prints the conversation.
func (c *HistoryCmd) Run(ctx context.Context, cli *CLI) error {
	cl, err := newClient(cli)
	if err != nil {
		return err
	}
	agents, err := cl.agentsNamed(ctx, c.Agent)
	if err != nil {
		return err
	}
	var hs []ownerapi.Conversation
	for _, a := range agents {
		var h ownerapi.Conversation
		path := fmt.Sprintf("/agents/%s/history/%s?n=%d", pathEscape(a), url.PathEscape(c.Context), c.N)
		if c.Peer != "" {
			path += "&peer=" + url.QueryEscape(c.Peer)
		}
		if err := cl.do(ctx, "GET", path, nil, &h); err != nil {
			return err
		}
		if len(h.Entries) > 0 || c.Agent != "" {
			hs = append(hs, h)
		}
	}
	if cl.json {
		if hs == nil {
			hs = []ownerapi.Conversation{}
		}
		return cl.printJSON(hs)
	}
	if len(hs) == 0 || (len(hs) == 1 && len(hs[0].Entries) == 0) {
		fmt.Fprintf(cl.out, "no messages in context %s\n", c.Context)
		return nil
	}
	for _, h := range hs {
		fmt.Fprintf(cl.out, "context %s  agent %s\n", h.ContextID, h.Agent)
		for _, e := range h.Entries {
			var who string
			switch e.Kind {
			case "message":
				who = "from " + e.Peer
			case "reply":
				who = "%s replied to " + e.Peer
				who = fmt.Sprintf(who, h.Agent)
			case "sent":
				who = fmt.Sprintf("%s sent to %s", h.Agent, e.Peer)
			case "answer":
				who = "answer from " + e.Peer
			default:
				who = e.Kind
			}
			line := fmt.Sprintf("%s  %-3s  %s", e.At.Format(time.RFC3339), e.Direction, who)
			if e.TaskID != "" {
				line += "  task " + e.TaskID
			}
			if e.State != "" {
				line += "  " + switchboard.ShortState(a2a.TaskState(e.State))
			}
			fmt.Fprintln(cl.out, line)
			if e.Untrusted {
				writeUntrusted(cl.out, e.Text)
			} else {
				for _, l := range strings.Split(e.Text, "\n") {
					fmt.Fprintln(cl.out, "  | "+l)
				}
			}
		}
	}
	return nil
}
