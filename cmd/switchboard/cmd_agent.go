package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard/internal/atomicfile"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// AgentCmd groups the agent commands.
type AgentCmd struct {
	Create AgentCreateCmd `cmd:"" help:"Create an agent."`
	List   AgentListCmd   `cmd:"" help:"List your agents (the operator sees all)."`
	Show   AgentShowCmd   `cmd:"" help:"Show an agent."`
	Update AgentUpdateCmd `cmd:"" help:"Change an agent."`
	Delete AgentDeleteCmd `cmd:"" help:"Delete an agent with its tokens and tasks."`

	RotateToken  AgentRotateTokenCmd  `cmd:"" name:"rotate-token" help:"Give an agent (any mode) a new agent token; the old one stops working and connections with it are closed."`
	RotateSecret AgentRotateSecretCmd `cmd:"" name:"rotate-secret" help:"Give a webhook agent a new signing secret."`
	Deliveries   AgentDeliveriesCmd   `cmd:"" help:"Show the work on its way to an agent (queued or offered)."`

	Approve   AgentApproveCmd   `cmd:"" help:"Approve an agent onto the network (operator only; see serve --require-approval)."`
	Unapprove AgentUnapproveCmd `cmd:"" help:"Take an agent off the network until approved again (operator only)."`
	Join      AgentJoinCmd      `cmd:"" help:"Put an agent in a community: its members send each other work, by name or by discovery."`
	Leave     AgentLeaveCmd     `cmd:"" help:"Take an agent out of a community."`
}

// agentFields are the flags shared by create and update.
type agentFields struct {
	Name           *string `name:"name" help:"Display name."`
	Description    *string `name:"description" help:"What the agent does, shown on its card."`
	Mode           *string `name:"mode" help:"Delivery mode: connector (default: the agent holds a WebSocket; see switchboard connect), inbox, webhook, or front (an A2A server that already runs at an https URL: --upstream)."`
	Endpoint       *string `name:"endpoint" help:"Webhook agents: the base URL tasks are posted to ({endpoint}/a2a/task)."`
	Upstream       *string `name:"upstream" placeholder:"URL" help:"Front agents: the https URL of the A2A server's JSON-RPC endpoint; set its credentials with  switchboard front credentials HANDLE."`
	UpstreamCard   *string `name:"upstream-card-url" placeholder:"URL" help:"Front agents: where the upstream's agent card is, if not at the well-known paths (on the upstream's origin)."`
	Record         *string `name:"record" placeholder:"task|none" help:"Front agents: task (default: a durable record of every task) or none (pass-through: no record, the ids kept in memory; no ListTasks, streams or pushes; see docs/front.md)."`
	Version        *string `name:"card-version" help:"The version field of the agent card."`
	Skills         string  `name:"skills" help:"Skills as a JSON array of A2A AgentSkill objects, or @FILE to read them from a file."`
	ExtendedSkills string  `name:"extended-skills" help:"Skills shown only to authenticated peers (JSON array or @FILE)."`
	AcceptsTasks   *bool   `name:"accepts-tasks" negatable:"" help:"Whether the agent takes new tasks."`
	Pairing        *string `name:"pairing" help:"Who approves peers' pairing requests: human (the owner; default), agent (the owner or the agent), or off (no pairing)."`
	MCP            *bool   `name:"mcp" negatable:"" help:"Whether the agent's MCP endpoint ({address}/mcp) is served (default: yes; --no-mcp: it answers 404)."`
	Domain         *string `name:"domain" placeholder:"HOST" help:"A host name of yours whose DNS (an A/AAAA or CNAME record) points at this deployment: the agent is also served at https://HOST/, its address then (docs/agents.md, Agent domains). --domain '' removes it."`
}

// request returns the body of POST or PATCH /agents with the fields the
// flags give; the others are absent.
func (f *agentFields) request() (ownerapi.AgentRequest, error) {
	b := ownerapi.AgentRequest{Name: f.Name, Description: f.Description, Mode: f.Mode, Endpoint: f.Endpoint,
		Version: f.Version, AcceptsTasks: f.AcceptsTasks, Pairing: f.Pairing, MCP: f.MCP, Upstream: f.Upstream, UpstreamCardURL: f.UpstreamCard, Record: f.Record,
		Domain: f.Domain}
	var err error
	if b.Skills, err = skillsFlag("skills", f.Skills); err != nil {
		return b, err
	}
	if b.ExtendedSkills, err = skillsFlag("extended-skills", f.ExtendedSkills); err != nil {
		return b, err
	}
	return b, nil
}

// skillsFlag reads the skills a flag gives as a JSON array of A2A
// AgentSkill objects, inline or as @FILE; nil if the flag is not set.
// Unknown fields are refused, as the server refuses them.
func skillsFlag(name, v string) (*[]a2a.AgentSkill, error) {
	if v == "" {
		return nil, nil
	}
	raw, err := readJSONArg(v)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", name, err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var skills []a2a.AgentSkill
	if err := dec.Decode(&skills); err != nil {
		return nil, fmt.Errorf("--%s: %w", name, err)
	}
	return &skills, nil
}

// readJSONArg reads a JSON value given inline or, as @FILE, from a file.
func readJSONArg(v string) (json.RawMessage, error) {
	data := []byte(v)
	if strings.HasPrefix(v, "@") {
		var err error
		if data, err = os.ReadFile(v[1:]); err != nil {
			return nil, err
		}
	}
	if !json.Valid(data) {
		return nil, fmt.Errorf("not valid JSON")
	}
	return json.RawMessage(data), nil
}

// AgentCreateCmd creates an agent.
type AgentCreateCmd struct {
	Handle string `arg:"" help:"Handle: the agent's address is {server}/a/{handle}. Lower-case letters, digits and '-'."`
	agentFields
	Account string `name:"account" help:"Create the agent for this account (operator only)."`
	Save    string `name:"save" placeholder:"FILE" help:"Write the agent token to FILE (mode 0600, through a temporary file renamed into place) instead of printing it. Nothing is written when the agent is not created."`
}

// Run creates the agent.
func (c *AgentCreateCmd) Run(ctx context.Context, cli *CLI) error {
	cl, err := newClient(cli)
	if err != nil {
		return err
	}
	body, err := c.request()
	if err != nil {
		return err
	}
	body.Handle = &c.Handle
	if c.Account != "" {
		body.AccountID = &c.Account
	}
	var g ownerapi.Agent
	if c.Save != "" {
		if err := cl.do(ctx, "POST", "/agents", body, &g); err != nil {
			return err
		}
		if err := saveAgentToken(c.Save, g.AgentToken); err != nil {
			return fmt.Errorf("agent %s was created, but its token could not be saved (rotate it with  switchboard agent rotate-token %s --save FILE): %w", g.Handle, g.Handle, err)
		}
		if g.AgentToken = ""; cl.json {
			return cl.printJSON(g)
		}
	} else if printed, err := cl.call(ctx, "POST", "/agents", body, &g); err != nil || printed {
		return err
	}
	fmt.Fprintf(cl.out, "created agent %s (%s), mode %s\n", g.Handle, g.ID, g.Mode)
	if g.Domain != "" {
		fmt.Fprintf(cl.out, "domain:     %s\n", g.Domain)
	}
	fmt.Fprintf(cl.out, "address:    %s\n", g.Address)
	fmt.Fprintf(cl.out, "agent card: %s\n", g.AgentCard)
	if c.Save != "" {
		fmt.Fprintf(cl.out, "agent token saved in %s (mode 0600)\n", c.Save)
	}
	printSecrets(cl, g.Mode, g.AgentToken, g.WebhookSecret)
	if g.Mode == "front" {
		fmt.Fprintf(cl.out, "upstream:   %s\n", g.Upstream)
		if g.Record == "none" {
			fmt.Fprintf(cl.out, "record:     none (pass-through: no ListTasks, streams or pushes; task ids kept in memory; see  switchboard front status %s)\n", g.Handle)
		}
		fmt.Fprintf(cl.out, "next: give the upstream's credentials with  switchboard front credentials %s --bearer-stdin, then check the path with  switchboard front verify %s\n", g.Handle, g.Handle)
		return nil
	}
	fmt.Fprintf(cl.out, "next: give a peer a token with  switchboard token issue --agent %s PEER-NAME\n", g.Handle)
	return nil
}

// printSecrets prints the credentials an answer shows once: the agent
// token (how a connector connects; how any agent sends on the network)
// and a webhook agent's signing secret.
func printSecrets(cl *client, mode, agentToken, webhookSecret string) {
	if agentToken != "" {
		fmt.Fprintf(cl.out, "agent token (shown once; the agent sends on the network, follows its tasks and reads its directory with it):\n\n  %s\n\n", agentToken)
		if mode == "connector" {
			fmt.Fprintf(cl.out, "connect:    switchboard connect --server %s --token %s --exec 'COMMAND'\n", cl.base, agentToken)
		}
	}
	if webhookSecret != "" {
		fmt.Fprintf(cl.out, "webhook signing secret (shown once; see docs/webhooks.md):\n\n  %s\n\n", webhookSecret)
	}
}

// saveAgentToken writes an agent token to path, mode 0600, through a
// temporary file renamed into place: an existing file is replaced only
// by a whole token, never emptied.
func saveAgentToken(path, token string) error {
	if strings.TrimSpace(token) == "" {
		return errors.New("the server returned no agent token")
	}
	return atomicfile.Write(path, []byte(token+"\n"), 0o600, 0o700)
}

// AgentListCmd lists agents.
type AgentListCmd struct{}

// Run lists the agents.
func (c *AgentListCmd) Run(ctx context.Context, cli *CLI) error {
	return ownerCall(ctx, cli, "GET", "/agents", nil, func(cl *client, all *[]ownerapi.Agent) error {
		tw := cl.table("HANDLE\tMODE\tACCEPTS\tNAME\tDOMAIN\tADDRESS")
		for _, g := range *all {
			fmt.Fprintf(tw, "%s\t%s\t%v\t%s\t%s\t%s\n", g.Handle, g.Mode, g.AcceptsTasks, g.Name, domainOrNone(g.Domain), g.Address)
		}
		return tw.Flush()
	})
}

// AgentShowCmd shows an agent.
type AgentShowCmd struct {
	Agent string `arg:"" help:"Handle or id."`
}

// Run shows the agent.
func (c *AgentShowCmd) Run(ctx context.Context, cli *CLI) error {
	return ownerCall(ctx, cli, "GET", "/agents/"+pathEscape(c.Agent), nil, func(cl *client, g *ownerapi.Agent) error {
		printAgent(cl, g)
		return nil
	})
}

func printAgent(cl *client, g *ownerapi.Agent) {
	tw := cl.table("")
	fmt.Fprintf(tw, "handle\t%s\n", g.Handle)
	fmt.Fprintf(tw, "id\t%s\n", g.ID)
	fmt.Fprintf(tw, "name\t%s\n", g.Name)
	fmt.Fprintf(tw, "description\t%s\n", g.Description)
	fmt.Fprintf(tw, "mode\t%s\n", g.Mode)
	if g.Connected != nil {
		fmt.Fprintf(tw, "connected\t%v\n", *g.Connected)
	}
	if g.Endpoint != "" {
		fmt.Fprintf(tw, "endpoint\t%s\n", g.Endpoint)
	}
	fmt.Fprintf(tw, "accepts tasks\t%v\n", g.AcceptsTasks)
	fmt.Fprintf(tw, "approved\t%v\n", g.Approved)
	fmt.Fprintf(tw, "pairing\t%s\n", g.Pairing)
	if g.MCPURL != "" {
		fmt.Fprintf(tw, "mcp\t%s\n", g.MCPURL)
	} else {
		fmt.Fprintf(tw, "mcp\toff\n")
	}
	fmt.Fprintf(tw, "communities\t%s\n", strings.Join(g.Communities, ", "))
	fmt.Fprintf(tw, "skills\t%d public, %d extended\n", len(g.Skills), len(g.ExtendedSkills))
	fmt.Fprintf(tw, "domain\t%s\n", domainOrNone(g.Domain))
	fmt.Fprintf(tw, "address\t%s\n", g.Address)
	fmt.Fprintf(tw, "agent card\t%s\n", g.AgentCard)
	if p := g.PublishedCard; p != nil {
		fmt.Fprintf(tw, "published card\t%q, %d skills, from %s (connect --forward), %s\n", p.Name, p.Skills, p.Target, p.UpdatedAt.Format(time.RFC3339))
	}
	fmt.Fprintf(tw, "account\t%s\n", g.AccountID)
	fmt.Fprintf(tw, "created\t%s\n", g.CreatedAt.Format(time.RFC3339))
	_ = tw.Flush()
}

// domainOrNone is an agent's domain as show and list print it.
func domainOrNone(d string) string {
	if d == "" {
		return "-"
	}
	return d
}

// AgentUpdateCmd changes an agent.
type AgentUpdateCmd struct {
	Agent string `arg:"" help:"Handle or id."`
	agentFields
}

// Run changes the agent.
func (c *AgentUpdateCmd) Run(ctx context.Context, cli *CLI) error {
	cl, err := newClient(cli)
	if err != nil {
		return err
	}
	body, err := c.request()
	if err != nil {
		return err
	}
	if body == (ownerapi.AgentRequest{}) {
		return fmt.Errorf("nothing to change: give at least one of --name, --description, --mode, --card-version, --skills, --extended-skills, --[no-]accepts-tasks, --pairing, --[no-]mcp, --domain")
	}
	var g ownerapi.Agent
	if printed, err := cl.call(ctx, "PATCH", "/agents/"+pathEscape(c.Agent), body, &g); err != nil || printed {
		return err
	}
	printAgent(cl, &g)
	printSecrets(cl, g.Mode, g.AgentToken, g.WebhookSecret)
	return nil
}

// AgentDeleteCmd deletes an agent.
type AgentDeleteCmd struct {
	Agent string `arg:"" help:"Handle or id."`
}

// Run deletes the agent.
func (c *AgentDeleteCmd) Run(ctx context.Context, cli *CLI) error {
	return ownerDone(ctx, cli, "DELETE", "/agents/"+pathEscape(c.Agent), nil, func(cl *client) error {
		fmt.Fprintf(cl.out, "deleted agent %s\n", c.Agent)
		return nil
	})
}

// AgentRotateTokenCmd gives an agent (of any mode) a new agent token.
type AgentRotateTokenCmd struct {
	Agent string `arg:"" help:"Handle or id."`
	Save  string `name:"save" placeholder:"FILE" help:"Write the new agent token to FILE (mode 0600, through a temporary file renamed into place) instead of printing it."`
}

// Run rotates the token.
func (c *AgentRotateTokenCmd) Run(ctx context.Context, cli *CLI) error {
	cl, err := newClient(cli)
	if err != nil {
		return err
	}
	var rot ownerapi.AgentTokenRotation
	if c.Save != "" {
		if err := cl.do(ctx, "POST", "/agents/"+pathEscape(c.Agent)+"/agent-token", nil, &rot); err != nil {
			return err
		}
		if err := saveAgentToken(c.Save, rot.AgentToken); err != nil {
			return fmt.Errorf("the agent token of %s was rotated, but the new one could not be saved (rotate it again): %w", c.Agent, err)
		}
		if rot.AgentToken = ""; cl.json {
			return cl.printJSON(rot)
		}
		fmt.Fprintf(cl.out, "new agent token of %s saved in %s (mode 0600); the old one no longer works\n", rot.Agent, c.Save)
		return nil
	}
	if printed, err := cl.call(ctx, "POST", "/agents/"+pathEscape(c.Agent)+"/agent-token", nil, &rot); err != nil || printed {
		return err
	}
	printSecrets(cl, "", rot.AgentToken, "")
	return nil
}

// AgentRotateSecretCmd gives a webhook agent a new signing secret.
type AgentRotateSecretCmd struct {
	Agent string `arg:"" help:"Handle or id."`
}

// Run rotates the secret.
func (c *AgentRotateSecretCmd) Run(ctx context.Context, cli *CLI) error {
	return ownerCall(ctx, cli, "POST", "/agents/"+pathEscape(c.Agent)+"/webhook-secret", nil, func(cl *client, rot *ownerapi.WebhookSecretRotation) error {
		printSecrets(cl, "", "", rot.WebhookSecret)
		return nil
	})
}

// AgentDeliveriesCmd lists what is on its way to an agent.
type AgentDeliveriesCmd struct {
	Agent string `arg:"" help:"Handle or id."`
	All   bool   `name:"all" help:"Include delivered and failed deliveries."`
}

// Run lists the deliveries.
func (c *AgentDeliveriesCmd) Run(ctx context.Context, cli *CLI) error {
	path := withAll("/agents/"+pathEscape(c.Agent)+"/deliveries", c.All)
	return ownerCall(ctx, cli, "GET", path, nil, func(cl *client, out *ownerapi.Deliveries) error {
		tw := cl.table("TASK\tKIND\tSTATE\tATTEMPTS\tDEADLINE\tLAST ERROR")
		for _, d := range out.Deliveries {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", d.TaskID, d.Kind, d.State, d.Attempts, d.Deadline.Format(time.RFC3339), d.LastError)
		}
		return tw.Flush()
	})
}
