package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/ownerapi"
)

// PairingCmd groups the commands that decide peers' pairing requests.
type PairingCmd struct {
	List    PairingListCmd    `cmd:"" help:"List the pairing requests waiting for a decision."`
	Approve PairingApproveCmd `cmd:"" help:"Approve a pairing request: the peer's next poll gets a peer token."`
	Deny    PairingDenyCmd    `cmd:"" help:"Deny a pairing request."`
}

// PairingListCmd lists pending pairing requests.
type PairingListCmd struct {
	Agent string `name:"agent" help:"Handle or id of the agent (default: every agent of the account)."`
}

// agentPairings is an agent's pending requests.
type agentPairings struct {
	Agent    string             `json:"agent"`
	Pairings []ownerapi.Pairing `json:"pairings"`
}

// pendingPairings returns the pending requests of the agent, or of every
// agent of the account when agent is empty.
func pendingPairings(ctx context.Context, cl *client, agent string) ([]agentPairings, error) {
	handles := []string{agent}
	if agent == "" && strings.HasPrefix(cl.token, "sba_") {
		return nil, errors.New("an agent token lists and decides its own agent's requests only (pairing mode agent): name the agent with --agent HANDLE")
	}
	if agent == "" {
		var all []ownerapi.Agent
		if err := cl.do(ctx, "GET", "/agents", nil, &all); err != nil {
			return nil, err
		}
		handles = handles[:0]
		for _, g := range all {
			handles = append(handles, g.Handle)
		}
	}
	out := make([]agentPairings, 0, len(handles))
	for _, h := range handles {
		var list []ownerapi.Pairing
		if err := cl.do(ctx, "GET", "/agents/"+pathEscape(h)+"/pairings", nil, &list); err != nil {
			return nil, err
		}
		out = append(out, agentPairings{Agent: h, Pairings: list})
	}
	return out, nil
}

// Run lists the requests.
func (c *PairingListCmd) Run(ctx context.Context, cli *CLI) error {
	cl, err := newClient(cli)
	if err != nil {
		return err
	}
	all, err := pendingPairings(ctx, cl, c.Agent)
	if err != nil {
		return err
	}
	if cl.json {
		return cl.printJSON(all)
	}
	tw := cl.table("AGENT\tCODE\tCLAIMED NAME\tCLIENT ID\tFROM\tREPLACES\tMINUTES LEFT")
	for _, a := range all {
		for _, p := range a.Pairings {
			left := max(0, int(time.Until(p.ExpiresAt).Minutes()+0.5))
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\n", a.Agent, p.UserCode, quoteClaim(p.ClientName), quoteClaim(p.ClientID),
				p.Requester, dash(p.ReplacesLabel), left)
		}
	}
	return tw.Flush()
}

// quoteClaim shows what a peer claims, quoted (it is unverified), "-" when
// empty.
func quoteClaim(s string) string {
	if s == "" {
		return "-"
	}
	return fmt.Sprintf("%q", s)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// PairingApproveCmd approves a request.
type PairingApproveCmd struct {
	Code  string `arg:"" help:"The code the peer shows (WDJB-4827)."`
	Agent string `name:"agent" help:"Handle or id of the agent (default: the agent whose request has the code)."`
	Label string `name:"label" help:"Label of the peer's token (default: the re-paired label, or one from the peer's name)."`
}

// Run approves the request.
func (c *PairingApproveCmd) Run(ctx context.Context, cli *CLI) error {
	return decide(ctx, cli, c.Agent, c.Code, "approve", ownerapi.PairingDecision{Label: c.Label})
}

// PairingDenyCmd denies a request.
type PairingDenyCmd struct {
	Code  string `arg:"" help:"The code the peer shows (WDJB-4827)."`
	Agent string `name:"agent" help:"Handle or id of the agent (default: the agent whose request has the code)."`
}

// Run denies the request.
func (c *PairingDenyCmd) Run(ctx context.Context, cli *CLI) error {
	return decide(ctx, cli, c.Agent, c.Code, "deny", nil)
}

// decide approves or denies the request with the code, finding its agent
// among the account's when none is named.
func decide(ctx context.Context, cli *CLI, agent, code, verb string, body any) error {
	cl, err := newClient(cli)
	if err != nil {
		return err
	}
	if agent == "" {
		if agent, err = agentWithCode(ctx, cl, code); err != nil {
			return err
		}
	}
	var p ownerapi.Pairing
	if printed, err := cl.call(ctx, "POST", "/agents/"+pathEscape(agent)+"/pairings/"+pathEscape(code)+"/"+verb, body, &p); err != nil || printed {
		return err
	}
	if p.Status == "approved" {
		fmt.Fprintf(cl.out, "approved %s for %s: the peer's token will be labelled %q\n", p.UserCode, agent, p.Label)
		fmt.Fprintf(cl.out, "revoke it with: switchboard token revoke --agent %s %s\n", agent, p.Label)
		return nil
	}
	fmt.Fprintf(cl.out, "denied %s for %s\n", p.UserCode, agent)
	return nil
}

// agentWithCode returns the handle of the account's agent that has a
// pending request with the code.
func agentWithCode(ctx context.Context, cl *client, code string) (string, error) {
	all, err := pendingPairings(ctx, cl, "")
	if err != nil {
		return "", err
	}
	want := normalizeCode(code)
	for _, a := range all {
		for _, p := range a.Pairings {
			if normalizeCode(p.UserCode) == want {
				return a.Agent, nil
			}
		}
	}
	return "", errors.New("no pending pairing request has that code (see switchboard pairing list)")
}

// normalizeCode reads a code as typed: any case, dashes and spaces ignored.
func normalizeCode(s string) string {
	return strings.NewReplacer("-", "", " ", "").Replace(strings.ToUpper(strings.TrimSpace(s)))
}
