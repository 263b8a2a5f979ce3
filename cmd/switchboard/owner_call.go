package main

import (
	"context"
	"fmt"
	"text/tabwriter"
)

// ownerCall is the body most management commands share: make the client
// from the command line, send one request to the owner API and print its
// answer, raw with --json, else the command's own way (show, given the
// client and the decoded answer).
func ownerCall[T any](ctx context.Context, cli *CLI, method, path string, body any, show func(cl *client, v *T) error) error {
	cl, err := newClient(cli)
	if err != nil {
		return err
	}
	var v T
	if printed, err := cl.call(ctx, method, path, body, &v); err != nil || printed {
		return err
	}
	return show(cl, &v)
}

// ownerDone is ownerCall for a request whose answer the command does not
// read (a deletion, a revocation): without --json it prints what the
// command makes of the request having succeeded.
func ownerDone(ctx context.Context, cli *CLI, method, path string, body any, show func(cl *client) error) error {
	cl, err := newClient(cli)
	if err != nil {
		return err
	}
	if printed, err := cl.call(ctx, method, path, body, nil); err != nil || printed {
		return err
	}
	return show(cl)
}

// table starts an aligned table on the command's output; header is its
// first line, cells separated by tabs. The caller flushes it.
func (c *client) table(header string) *tabwriter.Writer {
	tw := tabwriter.NewWriter(c.out, 0, 4, 2, ' ', 0)
	if header != "" {
		fmt.Fprintln(tw, header)
	}
	return tw
}

// withAll adds ?all=1 to a listing's path when all is set: the --all of
// the listings that otherwise show only what is current.
func withAll(path string, all bool) string {
	if all {
		return path + "?all=1"
	}
	return path
}

// ownerAgents makes the client of a command about "your agents" and names
// the agents it works on: the one given (--agent), else the one
// switchboard init configured, else all of the owner's.
func ownerAgents(ctx context.Context, cli *CLI, agent string) (*client, []string, error) {
	cl, err := newClient(cli)
	if err != nil {
		return nil, nil, err
	}
	if agent == "" {
		agent = cli.defaultAgent()
	}
	agents, err := cl.agentsNamed(ctx, agent)
	if err != nil {
		return nil, nil, err
	}
	return cl, agents, nil
}
