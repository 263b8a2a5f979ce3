package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// StatusCmd shows how one agent stands, and the one next step when
// something is missing.
type StatusCmd struct {
	Agent string `name:"agent" help:"The agent (handle or id); default: the one switchboard init configured."`
}

// agentStatus is what status reads about an agent, and what --json prints.
type agentStatus struct {
	Agent   *ownerapi.Agent      `json:"agent"`
	Waiting int                  `json:"waiting"`        // open tasks in its inbox (first page)
	More    bool                 `json:"waiting_more"`   // more than Waiting
	Wake    *ownerapi.WakeConfig `json:"wake,omitempty"` // nil: no wake webhook
	Tokens  []ownerapi.Token     `json:"peer_tokens"`    // active ones
	// AgentTokenRefused says the agent token init saved for the agent no
	// longer opens the server (revoked or rotated); absent when none is
	// saved for it.
	AgentTokenRefused *bool  `json:"saved_agent_token_refused,omitempty"`
	agentTokenFile    string // where that token is saved
	// Domain is the agent's domain and what status knows of it; nil
	// when it has none.
	Domain *domainStatus `json:"domain,omitempty"`
	// Public is how the world reaches each public address of the agent
	// (its domain, and its address on the deployment's name), when the
	// deployment serves HTTPS on a domain name.
	Public []ownerapi.Reachability `json:"public,omitempty"`
	Next   string                  `json:"next_step"` // "" when nothing is missing
	Rule   string                  `json:"next_rule,omitempty"`
}

// domainStatus is what status says of an agent's domain (docs/agents.md,
// "Agent domains"): the name and the address on it. What is checked of it
// (whether its DNS points here, whether it has a certificate) goes here,
// each as a field and a line of printDomain, and a rule of statusRules
// when it keeps the agent from being reached.
type domainStatus struct {
	Name    string `json:"name"`
	Address string `json:"address"`
}

// readDomain fills in what status says of the agent's domain.
func readDomain(s *agentStatus) {
	if s.Agent.Domain == "" {
		return
	}
	s.Domain = &domainStatus{Name: s.Agent.Domain, Address: s.Agent.Address}
}

// printDomain prints the domain's lines of status.
func printDomain(tw io.Writer, d *domainStatus) {
	if d == nil {
		fmt.Fprintf(tw, "domain\tnone\n")
		return
	}
	fmt.Fprintf(tw, "domain\t%s (the agent's address: %s)\n", d.Name, d.Address)
}

// statusRule is one rule of the next step: the first rule that applies
// names it.
type statusRule struct {
	name    string
	applies func(s *agentStatus) bool
	next    func(s *agentStatus) string
}

// statusRules are the next-step rules, in order: what keeps the agent
// from getting work first.
var statusRules = []statusRule{
	{"not approved", func(s *agentStatus) bool { return !s.Agent.Approved },
		func(s *agentStatus) string {
			return fmt.Sprintf("the operator has not approved %s onto the network yet: ask the operator to run  switchboard agent approve %s", s.Agent.Handle, s.Agent.Handle)
		}},
	{"paused", func(s *agentStatus) bool { return !s.Agent.AcceptsTasks },
		func(s *agentStatus) string {
			return fmt.Sprintf("%s does not accept tasks (paused): switchboard agent update %s --accepts-tasks", s.Agent.Handle, s.Agent.Handle)
		}},
	{"agent token revoked", func(s *agentStatus) bool { return s.AgentTokenRefused != nil && *s.AgentTokenRefused },
		func(s *agentStatus) string {
			restart := ""
			if s.Agent.Mode == "connector" {
				restart = ", then restart the connector"
			}
			return fmt.Sprintf("the agent token saved in %s was revoked or rotated: give %s a new one and save it with  switchboard agent rotate-token %s --save %s%s", s.agentTokenFile, s.Agent.Handle, s.Agent.Handle, s.agentTokenFile, restart)
		}},
	{"public address failing", func(s *agentStatus) bool { return publicFailing(s) != nil },
		func(s *agentStatus) string {
			a := publicFailing(s)
			return fmt.Sprintf("peers cannot reach %s: %s; the server checks again after a minute:  switchboard status --agent %s", a.URL, a.Problem, s.Agent.Handle)
		}},
	{"connector not connected", func(s *agentStatus) bool {
		return s.Agent.Mode == "connector" && s.Agent.Connected != nil && !*s.Agent.Connected
	}, func(s *agentStatus) string {
		return fmt.Sprintf("no connector is connected: start it with  switchboard connect --exec 'COMMAND'  (or make it a service:  switchboard init %s --exec 'COMMAND' --install); if it runs, its log says why it cannot connect (a rotated agent token: switchboard agent rotate-token %s)", s.Agent.Handle, s.Agent.Handle)
	}},
	{"inbox without wake", func(s *agentStatus) bool { return s.Agent.Mode == "inbox" && s.Wake == nil },
		func(s *agentStatus) string {
			return fmt.Sprintf("nothing wakes %s when work arrives: switchboard wake set --agent %s --url URL  (or read it yourself: switchboard inbox)", s.Agent.Handle, s.Agent.Handle)
		}},
	{"last wake failed", func(s *agentStatus) bool {
		return s.Wake != nil && len(s.Wake.Wakes) > 0 && s.Wake.Wakes[0].State == "failed"
	},
		func(s *agentStatus) string {
			return fmt.Sprintf("the last wake failed (%s): check the receiver, then  switchboard wake test --agent %s", wakeResult(&s.Wake.Wakes[0]), s.Agent.Handle)
		}},
	{"wake never fired", func(s *agentStatus) bool { return s.Wake != nil && len(s.Wake.Wakes) == 0 },
		func(s *agentStatus) string {
			return fmt.Sprintf("the wake webhook never fired: try it with  switchboard wake test --agent %s", s.Agent.Handle)
		}},
	{"no peer token", func(s *agentStatus) bool { return len(s.Tokens) == 0 },
		func(s *agentStatus) string {
			return fmt.Sprintf("no peer can call %s: give one a token with  switchboard token issue --agent %s PEER-NAME", s.Agent.Handle, s.Agent.Handle)
		}},
	{"work waits", func(s *agentStatus) bool { return s.Agent.Mode == "inbox" && s.Waiting > 0 },
		func(s *agentStatus) string {
			return fmt.Sprintf("tasks wait for an answer: switchboard inbox --agent %s", s.Agent.Handle)
		}},
}

// nextStep applies the rules to s.
func (s *agentStatus) nextStep() {
	for _, r := range statusRules {
		if r.applies(s) {
			s.Rule, s.Next = r.name, r.next(s)
			return
		}
	}
}

// Run reads the agent's state and prints it.
func (c *StatusCmd) Run(ctx context.Context, cli *CLI) error {
	agent := c.Agent
	if agent == "" {
		agent = cli.defaultAgent()
	}
	if agent == "" {
		return errors.New("which agent? give --agent HANDLE, or set one up with  switchboard init HANDLE")
	}
	cl, err := newClient(cli)
	if err != nil {
		return err
	}
	s, err := readStatus(ctx, cl, agent)
	if err != nil {
		return err
	}
	if cfg := cli.clientConfig(); cfg.AgentTokenFile != "" &&
		(agent == cfg.Agent || agent == s.Agent.ID) && s.Agent.Handle == cfg.Agent {
		if tok := cli.savedAgentToken(); tok != "" {
			refused, err := agentTokenRefused(ctx, cl, tok)
			if err != nil {
				return err
			}
			s.AgentTokenRefused, s.agentTokenFile = &refused, cfg.AgentTokenFile
		}
	}
	s.nextStep()
	if cl.json {
		return cl.printJSON(s)
	}
	printStatus(cl, s)
	return nil
}

// readStatus reads the agent, its inbox's first page, its wake webhook
// and its peer tokens.
func readStatus(ctx context.Context, cl *client, agent string) (*agentStatus, error) {
	path := "/agents/" + pathEscape(agent)
	s := &agentStatus{Agent: &ownerapi.Agent{}}
	if err := cl.do(ctx, "GET", path, nil, s.Agent); err != nil {
		return nil, err
	}
	var box ownerapi.Inbox
	if err := cl.do(ctx, "GET", path+"/inbox", nil, &box); err != nil {
		return nil, err
	}
	s.Waiting, s.More = len(box.Tasks), box.NextCursor != ""
	var w ownerapi.WakeConfig
	err := cl.do(ctx, "GET", path+"/wake", nil, &w)
	var ae *apiError
	switch {
	case err == nil:
		s.Wake = &w
	case !(errors.As(err, &ae) && ae.Status == http.StatusNotFound):
		return nil, err
	}
	var tokens []ownerapi.Token
	if err := cl.do(ctx, "GET", path+"/tokens", nil, &tokens); err != nil {
		return nil, err
	}
	for _, t := range tokens {
		if t.Active {
			s.Tokens = append(s.Tokens, t)
		}
	}
	readDomain(s)
	if s.Public, err = readPublic(ctx, cl, agent); err != nil {
		return nil, err
	}
	return s, nil
}

// agentTokenRefused reports whether the server refuses the agent token
// (GET /directory, which takes an agent token, answers 401).
func agentTokenRefused(ctx context.Context, cl *client, token string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", cl.base+"/directory", nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := cl.http.Do(req)
	if err != nil {
		return false, err
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusUnauthorized, nil
}

// printStatus prints s for a person.
func printStatus(cl *client, s *agentStatus) {
	g := s.Agent
	tw := cl.table("")
	fmt.Fprintf(tw, "agent\t%s (%s)\n", g.Handle, g.Mode)
	fmt.Fprintf(tw, "address\t%s\n", g.Address)
	printDomain(tw, s.Domain)
	printPublic(tw, s.Public)
	switch {
	case g.Connected != nil && *g.Connected && g.ConnectedSince != nil:
		fmt.Fprintf(tw, "reachable\tyes: a connector is connected, since %s (%s)\n", g.ConnectedSince.Format(time.RFC3339), since(*g.ConnectedSince))
	case g.Connected != nil && *g.Connected:
		fmt.Fprintf(tw, "reachable\tyes: a connector is connected\n")
	case g.Connected != nil:
		fmt.Fprintf(tw, "reachable\tno connector connected: work waits for it\n")
	case g.Mode == "inbox":
		fmt.Fprintf(tw, "reachable\tinbox: work waits until answered\n")
	case g.Mode == "front":
		fmt.Fprintf(tw, "reachable\tfront of %s (check the path: switchboard front verify %s)\n", g.Upstream, g.Handle)
	default:
		fmt.Fprintf(tw, "reachable\t%s mode\n", g.Mode)
	}
	accepting := "accepting tasks"
	if !g.AcceptsTasks {
		accepting = "paused: not accepting tasks"
	}
	fmt.Fprintf(tw, "tasks\t%s; %d waiting%s\n", accepting, s.Waiting, map[bool]string{true: " (and more)"}[s.More])
	switch {
	case s.Wake == nil:
		fmt.Fprintf(tw, "wake\tnone\n")
	case len(s.Wake.Wakes) == 0:
		fmt.Fprintf(tw, "wake\t%s (%s), never fired\n", s.Wake.URL, s.Wake.Preset)
	default:
		last := &s.Wake.Wakes[0]
		fmt.Fprintf(tw, "wake\t%s (%s), last %s %s: %s\n", s.Wake.URL, s.Wake.Preset, last.Kind, last.CreatedAt.Format(time.RFC3339), wakeResult(last))
	}
	var labels []string
	for _, t := range s.Tokens {
		used := "never used"
		if t.LastUsedAt != nil {
			used = "used " + since(*t.LastUsedAt)
		}
		labels = append(labels, fmt.Sprintf("%s (%s)", t.Label, used))
	}
	if len(labels) == 0 {
		labels = []string{"none"}
	}
	fmt.Fprintf(tw, "peer tokens\t%s\n", strings.Join(labels, ", "))
	if len(g.Communities) > 0 {
		fmt.Fprintf(tw, "communities\t%s\n", strings.Join(g.Communities, ", "))
	}
	_ = tw.Flush()
	if s.Next == "" {
		fmt.Fprintln(cl.out, "next step: none, the agent is ready")
		return
	}
	fmt.Fprintf(cl.out, "next step: %s\n", s.Next)
}

// since says how long ago t was, in a few words.
func since(t time.Time) string {
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return "less than a minute ago"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d.Hours()))
	}
	return fmt.Sprintf("%d days ago", int(d.Hours()/24))
}

// wakeResult says how a wake ended, in a few words.
func wakeResult(w *ownerapi.Wake) string {
	switch {
	case w.LastError != "":
		return fmt.Sprintf("%s, %s", w.State, switchboard.Truncate(w.LastError, 80))
	case w.LastStatus != 0:
		return fmt.Sprintf("%s, HTTP %d", w.State, w.LastStatus)
	}
	return w.State
}
