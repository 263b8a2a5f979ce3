package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// The network's commands (docs/network.md): approval and membership (agent
// approve|unapprove|join|leave), communities and their peer tokens
// (community …), the directory, and send without --agent: work an agent
// sends with its own agent token.

// agentTokenEnv is where connect and the network's commands read the
// agent token from by default.
const agentTokenEnv = "SWITCHBOARD_AGENT_TOKEN"

// maxNetworkWait is the longest --wait of a send on the network (the
// server's bound).
const maxNetworkWait = 10 * time.Minute

// AgentApproveCmd approves an agent onto the network.
type AgentApproveCmd struct {
	Agent string `arg:"" help:"Handle or id."`
}

// Run approves the agent (operator only).
func (c *AgentApproveCmd) Run(ctx context.Context, cli *CLI) error {
	return agentAction(ctx, cli, "POST", "/agents/"+pathEscape(c.Agent)+"/approve")
}

// AgentUnapproveCmd takes an agent off the network.
type AgentUnapproveCmd struct {
	Agent string `arg:"" help:"Handle or id."`
}

// Run unapproves the agent (operator only).
func (c *AgentUnapproveCmd) Run(ctx context.Context, cli *CLI) error {
	return agentAction(ctx, cli, "POST", "/agents/"+pathEscape(c.Agent)+"/unapprove")
}

// AgentJoinCmd puts an agent in a community.
type AgentJoinCmd struct {
	Agent     string `arg:"" help:"Handle or id."`
	Community string `arg:"" help:"The community's name (a DNS label); it comes into being, open, if it does not exist."`
}

// Run joins the community.
func (c *AgentJoinCmd) Run(ctx context.Context, cli *CLI) error {
	return agentAction(ctx, cli, "PUT", "/agents/"+pathEscape(c.Agent)+"/communities/"+pathEscape(c.Community))
}

// AgentLeaveCmd takes an agent out of a community.
type AgentLeaveCmd struct {
	Agent     string `arg:"" help:"Handle or id."`
	Community string `arg:"" help:"The community's name."`
}

// Run leaves the community.
func (c *AgentLeaveCmd) Run(ctx context.Context, cli *CLI) error {
	return agentAction(ctx, cli, "DELETE", "/agents/"+pathEscape(c.Agent)+"/communities/"+pathEscape(c.Community))
}

// agentAction sends a request that answers with the agent, and shows it.
func agentAction(ctx context.Context, cli *CLI, method, path string) error {
	return ownerCall(ctx, cli, method, path, nil, func(cl *client, g *ownerapi.Agent) error {
		printAgent(cl, g)
		return nil
	})
}

// CommunityCmd groups the community commands.
type CommunityCmd struct {
	List   CommunityListCmd   `cmd:"" help:"List the communities your agents are in (the operator: all), with their member counts."`
	Set    CommunitySetCmd    `cmd:"" help:"Create a community or change whether it is closed (operator only); joining a closed one needs the operator."`
	Token  CommunityTokenCmd  `cmd:"" help:"Issue a peer token of a community's address ({server}/c/NAME); owners of its members and the operator may."`
	Tokens CommunityTokensCmd `cmd:"" help:"List the peer tokens of a community you issued (the operator: all)."`
	Revoke CommunityRevokeCmd `cmd:"" help:"Revoke a peer token of a community."`
}

// CommunityListCmd lists communities.
type CommunityListCmd struct{}

// Run lists them.
func (c *CommunityListCmd) Run(ctx context.Context, cli *CLI) error {
	return ownerCall(ctx, cli, "GET", "/communities", nil, func(cl *client, all *[]ownerapi.Community) error {
		tw := cl.table("NAME\tMEMBERS\tCLOSED\tADDRESS")
		for _, c := range *all {
			fmt.Fprintf(tw, "%s\t%d\t%v\t%s\n", c.Name, c.Members, c.Closed, c.Address)
		}
		return tw.Flush()
	})
}

// CommunitySetCmd configures a community.
type CommunitySetCmd struct {
	Name   string `arg:"" help:"The community's name."`
	Closed *bool  `name:"closed" negatable:"" help:"Close the community (--closed) or open it (--no-closed)."`
}

// Run configures it.
func (c *CommunitySetCmd) Run(ctx context.Context, cli *CLI) error {
	return ownerCall(ctx, cli, "PUT", "/communities/"+pathEscape(c.Name), ownerapi.CommunitySettings{Closed: c.Closed}, func(cl *client, got *ownerapi.Community) error {
		fmt.Fprintf(cl.out, "community %s: %d members, closed %v, address %s\n", got.Name, got.Members, got.Closed, got.Address)
		return nil
	})
}

// CommunityTokenCmd issues a peer token of a community.
type CommunityTokenCmd struct {
	Name   string `arg:"" help:"The community's name."`
	Label  string `arg:"" help:"The peer's name (A-Z a-z 0-9 _ -), shown to the agents it sends work to."`
	Rotate bool   `name:"rotate" help:"Replace the active token with this label (the peer keeps its tasks)."`
}

// Run issues it.
func (c *CommunityTokenCmd) Run(ctx context.Context, cli *CLI) error {
	body := ownerapi.TokenIssue{Label: c.Label, Rotate: c.Rotate}
	return ownerCall(ctx, cli, "POST", "/communities/"+pathEscape(c.Name)+"/tokens", body, func(cl *client, tok *ownerapi.Token) error {
		fmt.Fprintf(cl.out, "%s\n", tok.Token)
		fmt.Fprintf(cli.errOut, "peer token %q of community %s: shown once. Any A2A client reaches the community at %s (card %s)\n",
			tok.Label, tok.Community, tok.Address, tok.AgentCard)
		return nil
	})
}

// CommunityTokensCmd lists a community's peer tokens.
type CommunityTokensCmd struct {
	Name string `arg:"" help:"The community's name."`
	All  bool   `name:"all" help:"Revoked tokens too."`
}

// Run lists them.
func (c *CommunityTokensCmd) Run(ctx context.Context, cli *CLI) error {
	path := withAll("/communities/"+pathEscape(c.Name)+"/tokens", c.All)
	return ownerCall(ctx, cli, "GET", path, nil, func(cl *client, toks *[]ownerapi.Token) error {
		tw := cl.table("LABEL\tACTIVE\tCREATED")
		for _, t := range *toks {
			fmt.Fprintf(tw, "%s\t%v\t%s\n", t.Label, t.Active, t.CreatedAt.Format(time.RFC3339))
		}
		return tw.Flush()
	})
}

// CommunityRevokeCmd revokes a community's peer token.
type CommunityRevokeCmd struct {
	Name  string `arg:"" help:"The community's name."`
	Label string `arg:"" help:"The token's label."`
}

// Run revokes it.
func (c *CommunityRevokeCmd) Run(ctx context.Context, cli *CLI) error {
	return ownerDone(ctx, cli, "DELETE", "/communities/"+pathEscape(c.Name)+"/tokens/"+pathEscape(c.Label), nil, func(cl *client) error {
		fmt.Fprintf(cl.out, "revoked %s of %s\n", c.Label, c.Name)
		return nil
	})
}

// DirectoryCmd lists the agents of the network one can see.
type DirectoryCmd struct {
	Community string  `name:"community" help:"Only this community (one of yours)."`
	Skill     string  `name:"skill" help:"Only agents offering this skill (a card skill's id or tag)."`
	Live      bool    `name:"live" help:"List only the agents that are live now (connected, or a healthy webhook): those discovery chooses by default. Without it every member is listed, with its LIVE and WAKEABLE columns."`
	Token     *string `name:"token" help:"An agent token (sba_…): the agent's view, the other members of its communities. Default: $SWITCHBOARD_AGENT_TOKEN if set, else the owner's view (the members of your agents' communities; the operator's: all). An empty value is an error."`
}

// Run lists them.
func (c *DirectoryCmd) Run(ctx context.Context, cli *CLI) error {
	var token string
	if c.Token != nil {
		// An empty --token (a variable that was not set) must not fall
		// back to the owner's view silently.
		if token = strings.TrimSpace(*c.Token); token == "" {
			return errors.New("--token is empty: give the agent token (sba_…), or leave --token out for the owner's view")
		}
	} else {
		token = strings.TrimSpace(os.Getenv(agentTokenEnv))
	}
	var cl *client
	var err error
	if token != "" {
		cl, err = newAgentClient(cli, token)
	} else {
		cl, err = newClient(cli)
	}
	if err != nil {
		return err
	}
	q := url.Values{}
	for k, v := range map[string]string{"community": c.Community, "skill": c.Skill} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if c.Live {
		q.Set("live", "true")
	}
	var all []ownerapi.DirectoryEntry
	for {
		var page ownerapi.Directory
		if printed, err := cl.call(ctx, "GET", "/directory?"+q.Encode(), nil, &page); err != nil || printed {
			return err
		}
		all = append(all, page.Agents...)
		if page.NextAfter == "" {
			break
		}
		q.Set("after", page.NextAfter)
	}
	tw := cl.table("HANDLE\tLIVE\tWAKEABLE\tACCEPTS\tAPPROVED\tCOMMUNITIES\tSKILLS\tADDRESS")
	for _, e := range all {
		var skills []string
		for _, s := range e.Skills {
			skills = append(skills, s.ID)
		}
		fmt.Fprintf(tw, "%s\t%v\t%v\t%v\t%v\t%s\t%s\t%s\n", e.Handle, e.Live, e.Wakeable, e.AcceptsTasks, e.Approved,
			strings.Join(e.Communities, ","), strings.Join(skills, ","), e.Address)
	}
	return tw.Flush()
}

// newAgentClient returns a client of the server that authenticates with an
// agent token.
func newAgentClient(cli *CLI, token string) (*client, error) {
	base := strings.TrimRight(cli.serverURL(), "/")
	if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--server / SWITCHBOARD_URL must be an http(s) URL, got %q", cli.serverURL())
	}
	return &client{base: base, token: token, http: &http.Client{Timeout: maxNetworkWait + time.Minute}, json: cli.JSON, out: cli.out}, nil
}

// agentToken returns the agent token of a send on the network: --token,
// --token-env or --token-stdin, else $SWITCHBOARD_AGENT_TOKEN.
func (c *SendCmd) agentToken(cli *CLI) (string, error) {
	tok, err := c.targetFlags.token(cli, nil)
	if err != nil {
		return "", err
	}
	if c.Token == "" && c.TokenEnv == "" && !c.TokenStdin {
		tok = strings.TrimSpace(os.Getenv(agentTokenEnv))
		if tok == "" {
			tok = cli.savedAgentToken() // the one switchboard init saved
		}
	}
	if tok == "" {
		return "", errors.New("no agent token: without --agent the message is sent as an agent of the network; give its agent token (sba_…) with --token-env, --token-stdin, --token or $SWITCHBOARD_AGENT_TOKEN (what switchboard connect uses)")
	}
	return tok, nil
}

// runNetwork sends the message as an agent of the network (POST /tasks):
// to Target by name, or by discovery.
func (c *SendCmd) runNetwork(ctx context.Context, cli *CLI, text string) error {
	if c.Push {
		return errors.New("--push needs --agent: on the network, follow the task with --wait or switchboard show")
	}
	if c.Wait && c.Timeout > maxNetworkWait {
		return fmt.Errorf("--timeout on the network is at most %s", maxNetworkWait)
	}
	token, err := c.agentToken(cli)
	if err != nil {
		return err
	}
	cl, err := newAgentClient(cli, token)
	if err != nil {
		return err
	}
	return c.sendOnNetwork(ctx, cli, cl, "", text)
}

// sendOnNetwork is POST /tasks with cl's token: an agent token (agent
// empty), or the owner token and the handle of the owner's agent that
// sends.
func (c *SendCmd) sendOnNetwork(ctx context.Context, cli *CLI, cl *client, agent, text string) error {
	if c.Push {
		return errors.New("--push goes with a send to an address: on the network, follow the task with --wait or switchboard show")
	}
	if c.Wait && c.Timeout > maxNetworkWait {
		return fmt.Errorf("--timeout on the network is at most %s", maxNetworkWait)
	}
	body := ownerapi.NetworkTask{Agent: agent, To: c.Target, Community: c.Community, Skill: c.Skill, WakeSleepers: c.WakeSleepers,
		Payload: ownerapi.NetworkPayload{Message: text}, Blocking: c.Wait, MessageID: switchboard.NewID(),
		TaskID: c.Task, ContextID: c.Context}
	if c.Wait {
		body.TimeoutSeconds = max(1, int(c.Timeout/time.Second))
	}
	if !c.Wait {
		var acc ownerapi.NetworkTaskAccepted
		if printed, err := cl.call(ctx, "POST", "/tasks", body, &acc); err != nil || printed {
			return err
		}
		fmt.Fprintf(cl.out, "sent to %s: task %s (follow: --wait, or GET /tasks/%s with the sender's agent token)\n", acc.Agent, acc.TaskID, acc.TaskID)
		return nil
	}
	var res ownerapi.NetworkTaskResult
	if printed, err := cl.call(ctx, "POST", "/tasks", body, &res); err != nil || printed {
		return err
	}
	fmt.Fprintf(cl.out, "%s: task %s %s\n", res.Agent, res.TaskID, res.Status)
	if res.Result != "" {
		writeUntrusted(cl.out, res.Result)
	}
	if st, _ := switchboard.ParseState(res.Status); !st.Terminal() && !switchboard.Interrupted(st) {
		fmt.Fprintf(cli.errOut, "switchboard: still %s after %s\n", res.Status, c.Timeout)
	}
	return nil
}
