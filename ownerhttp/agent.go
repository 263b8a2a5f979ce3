package ownerhttp

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/audit"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// viewAgent is an agent as the owner API shows it, without its secrets.
func (s *Face) viewAgent(r *http.Request, g *switchboard.Agent) ownerapi.Agent {
	return s.viewAgentIn(r, g, s.communitiesOf(r, g))
}

// communitiesOf returns the communities of the agents, for their views
// (none without the network; a failed read is logged and shows none).
func (s *Face) communitiesOf(r *http.Request, gs ...*switchboard.Agent) map[string][]string {
	if len(gs) == 0 {
		return nil
	}
	ids := make([]string, len(gs))
	for i, g := range gs {
		ids[i] = g.ID
	}
	m, err := s.members.AgentCommunities(r.Context(), ids...)
	if err != nil {
		s.Logger.Warn("read the agents' communities", "err", err)
	}
	return m
}

// viewAgentIn is viewAgent with the communities of agents already read.
func (s *Face) viewAgentIn(r *http.Request, g *switchboard.Agent, communities map[string][]string) ownerapi.Agent {
	addr := s.AddressURL(r, g)
	comms := communities[g.ID]
	if comms == nil {
		comms = []string{}
	}
	v := ownerapi.Agent{
		ID: g.ID, AccountID: g.AccountID, Handle: g.Handle, Domain: g.Domain, Name: g.Name, Description: g.Description,
		Mode: string(g.Mode), Version: g.Version, Skills: httpapi.NonNilSkills(g.Skills), ExtendedSkills: httpapi.NonNilSkills(g.ExtendedSkills),
		AcceptsTasks: g.AcceptsTasks, Approved: g.Approved, Pairing: string(httpapi.PairingMode(g)), MCP: !g.MCPOff, Communities: comms,
		Endpoint: g.Endpoint, Address: addr + "/", AgentCard: addr + "/.well-known/agent-card.json",
		CreatedAt: g.CreatedAt, UpdatedAt: g.UpdatedAt,
	}
	if s.MCP && !g.MCPOff {
		v.MCPURL = addr + "/mcp"
	}
	if fronts, err := s.fronts.of(g); err == nil {
		if f, err := fronts.Find(r.Context(), g.ID); err == nil {
			v.Upstream, v.UpstreamCardURL, v.Record = f.Upstream, f.CardURL, frontRecord(f)
		}
	}
	if g.Mode == switchboard.ModeConnector {
		s.connection(r, g, &v)
	}
	return v
}

// viewConnection adds to the view v of a connector agent whether it holds
// a connection to any instance, and since when (Presence).
func (s *Face) viewConnection(r *http.Request, g *switchboard.Agent, v *ownerapi.Agent) {
	since, connected, err := s.Presence.AgentConnectedSince(r.Context(), g.ID)
	if err != nil {
		s.Logger.Warn("read the agent's session", "agent_id", g.ID, "err", err)
		return
	}
	v.Connected = &connected
	if connected {
		since = since.UTC()
		v.ConnectedSince = &since
	}
}

// validateAgentRequest checks the fields present and fills in normalised
// values.
func validateAgentRequest(b *ownerapi.AgentRequest) error {
	if b.Name != nil {
		n := strings.TrimSpace(*b.Name)
		if len(n) > switchboard.MaxNameLen {
			return switchboard.Errorf(switchboard.EINVALID, "name is longer than %d characters", switchboard.MaxNameLen)
		}
		if err := switchboard.CheckName("name", n); err != nil {
			return err
		}
		b.Name = &n
	}
	if b.Description != nil {
		if len(*b.Description) > switchboard.MaxDescriptionLen {
			return switchboard.Errorf(switchboard.EINVALID, "description is longer than %d characters", switchboard.MaxDescriptionLen)
		}
		if err := switchboard.CheckDescription("description", *b.Description); err != nil {
			return err
		}
	}
	if b.Mode != nil && !switchboard.ValidMode(switchboard.DeliveryMode(*b.Mode)) {
		return switchboard.Errorf(switchboard.EINVALID, "mode %q is not supported (supported: connector, inbox, webhook, front)", switchboard.Truncate(*b.Mode, 32))
	}
	if b.Pairing != nil && !switchboard.ValidPairingMode(switchboard.PairingMode(*b.Pairing)) {
		return switchboard.Errorf(switchboard.EINVALID, "pairing %q is not a mode (human, agent or off)", switchboard.Truncate(*b.Pairing, 32))
	}
	if b.Endpoint != nil && *b.Endpoint != "" {
		if err := validateEndpoint(*b.Endpoint); err != nil {
			return err
		}
	}
	if b.Version != nil {
		if len(*b.Version) > 64 {
			return switchboard.Errorf(switchboard.EINVALID, "version is longer than 64 characters")
		}
		if err := switchboard.CheckName("version", *b.Version); err != nil {
			return err
		}
	}
	n := 0
	for _, set := range []struct {
		field  string
		skills *[]a2a.AgentSkill
	}{{"skills", b.Skills}, {"extended_skills", b.ExtendedSkills}} {
		if set.skills == nil {
			continue
		}
		skills := *set.skills
		n += len(skills)
		for i := range skills {
			if err := validateSkill(fmt.Sprintf("%s[%d]", set.field, i), &skills[i]); err != nil {
				return err
			}
		}
	}
	if n > switchboard.MaxSkills {
		return switchboard.Errorf(switchboard.EINVALID, "an agent lists at most %d skills", switchboard.MaxSkills)
	}
	return nil
}

// validateSkill checks a skill the owner sets (field names it in errors:
// "skills[2]") and fills in its defaults.
func validateSkill(field string, sk *a2a.AgentSkill) error {
	sk.ID = strings.TrimSpace(sk.ID)
	if err := switchboard.CheckSkill(field, sk); err != nil {
		return err
	}
	if !switchboard.ValidRef(sk.ID) {
		return switchboard.Errorf(switchboard.EINVALID, "skill id %q must be 1-%d characters of A-Z a-z 0-9 . _ : -", switchboard.Truncate(sk.ID, 40), switchboard.MaxRefLen)
	}
	if sk.Name == "" {
		sk.Name = sk.ID
	}
	if len(sk.Name) > switchboard.MaxNameLen || len(sk.Description) > switchboard.MaxDescriptionLen {
		return switchboard.Errorf(switchboard.EINVALID, "skill %q: name or description too long", sk.ID)
	}
	if sk.Tags == nil {
		sk.Tags = []string{}
	}
	return nil
}

func (s *Face) handleCreateAgent(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	var b ownerapi.AgentRequest
	if err := s.DecodeJSON(w, r, &b); err != nil {
		s.WriteError(w, r, err)
		return
	}
	if err := validateAgentRequest(&b); err != nil {
		s.WriteError(w, r, err)
		return
	}
	if b.Handle == nil {
		s.WriteError(w, r, switchboard.Errorf(switchboard.EINVALID, "handle is required"))
		return
	}
	handle, err := switchboard.NormalizeHandle(*b.Handle)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	var domain string
	if b.Domain != nil {
		if domain, err = s.agentDomain(r, acct, *b.Domain); err != nil {
			s.WriteError(w, r, err)
			return
		}
	}
	if handle == s.Cfg.DefaultAgent && !acct.IsOperator() {
		// The default agent is served at the root: only the operator may
		// claim its handle.
		s.WriteError(w, r, switchboard.Errorf(switchboard.EFORBIDDEN, "the handle %q is reserved for this deployment's default agent", handle))
		return
	}
	owner := acct.ID
	if b.AccountID != nil && *b.AccountID != acct.ID {
		if !acct.IsOperator() {
			s.WriteError(w, r, switchboard.Errorf(switchboard.EFORBIDDEN, "only the operator may create agents for another account"))
			return
		}
		if _, err := s.Accounts.FindAccountByID(r.Context(), *b.AccountID); err != nil {
			s.WriteError(w, r, err)
			return
		}
		owner = *b.AccountID
	}
	g := &switchboard.Agent{
		ID: switchboard.NewID(), AccountID: owner, Handle: handle, Name: handle,
		Mode: switchboard.ModeConnector, Version: "1.0.0", AcceptsTasks: true, Approved: s.approvedAtCreation(acct),
	}
	applyAgentRequest(g, &b)
	if err := s.checkFront(g.Mode, &b, nil); err != nil {
		s.WriteError(w, r, err)
		return
	}
	if g.Mode == switchboard.ModeWebhook {
		if g.Endpoint == "" {
			s.WriteError(w, r, switchboard.Errorf(switchboard.EINVALID, "a webhook agent needs an endpoint"))
			return
		}
		g.WebhookSecret = switchboard.NewWebhookSecret()
	}
	err = s.Agents.CreateAgent(r.Context(), g)
	t := audit.Agent(g)
	t.Detail = "mode " + string(g.Mode)
	s.Record(r, acct, switchboard.AuditAgentCreate, t, err)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	if domain != "" {
		if g, err = s.giveDomain(r, acct, g, domain); err != nil {
			s.WriteError(w, r, err)
			return
		}
	}
	if err := s.putFront(r, g, &b); err != nil {
		s.WriteError(w, r, err)
		return
	}
	v := s.viewAgent(r, g)
	v.WebhookSecret = g.WebhookSecret
	// Every agent, whatever its mode, has an agent token: its identity on
	// the network (sends, its tasks, its directory), and a connector's
	// connection.
	secret, err := s.owners.IssueAgentToken(r.Context(), g)
	s.Record(r, acct, switchboard.AuditTokenIssue, audit.Token(g.AccountID, switchboard.TokenAgent, "", "agent "+g.Handle), err)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	v.AgentToken = secret
	httpapi.WriteJSON(w, http.StatusCreated, v)
}

// applyAgentRequest copies the fields present in b onto g.
func applyAgentRequest(g *switchboard.Agent, b *ownerapi.AgentRequest) {
	if b.Name != nil && *b.Name != "" {
		g.Name = *b.Name
	}
	if b.Description != nil {
		g.Description = *b.Description
	}
	if b.Mode != nil {
		g.Mode = switchboard.DeliveryMode(*b.Mode)
	}
	if b.Version != nil && *b.Version != "" {
		g.Version = *b.Version
	}
	if b.Skills != nil {
		g.Skills = *b.Skills
	}
	if b.ExtendedSkills != nil {
		g.ExtendedSkills = *b.ExtendedSkills
	}
	if b.AcceptsTasks != nil {
		g.AcceptsTasks = *b.AcceptsTasks
	}
	if b.Pairing != nil {
		g.Pairing = switchboard.PairingMode(*b.Pairing)
	}
	if b.MCP != nil {
		g.MCPOff = !*b.MCP
	}
	if b.Endpoint != nil {
		g.Endpoint = *b.Endpoint
	}
}

func (s *Face) handleListAgents(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	var f switchboard.AgentFilter
	if !acct.IsOperator() {
		f.AccountID = &acct.ID
	} else if id := r.URL.Query().Get("account"); id != "" {
		f.AccountID = &id
	}
	all, err := s.Agents.FindAgents(r.Context(), f)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	out := make([]ownerapi.Agent, 0, len(all))
	comms := s.communitiesOf(r, all...)
	for _, g := range all {
		out = append(out, s.viewAgentIn(r, g, comms))
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}

func (s *Face) handleGetAgent(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g, err := s.OwnedAgent(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	v := s.viewAgent(r, g)
	v.PublishedCard = s.publishedCardView(r, g)
	httpapi.WriteJSON(w, http.StatusOK, v)
}

// publishedCardView is what the owner sees of the card a connector agent's
// forwarding connector published, or nil.
func (s *Face) publishedCardView(r *http.Request, g *switchboard.Agent) *ownerapi.PublishedCard {
	if g.Mode != switchboard.ModeConnector {
		return nil
	}
	pc, err := s.published.FindPublishedCard(r.Context(), g.ID)
	if err != nil {
		if switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
			s.Logger.Warn("read a published card", "agent_id", g.ID, "err", err)
		}
		return nil
	}
	v := &ownerapi.PublishedCard{Target: pc.Target, UpdatedAt: pc.UpdatedAt}
	if c := s.published.Card(r.Context(), g.ID, s.AddressURL(r, g)); c != nil {
		v.Name, v.Skills = c.Name, len(c.Skills)
	}
	return v
}

func (s *Face) handleUpdateAgent(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g, err := s.OwnedAgent(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	var b ownerapi.AgentRequest
	if err := s.DecodeJSON(w, r, &b); err != nil {
		s.WriteError(w, r, err)
		return
	}
	if b.Handle != nil || b.AccountID != nil {
		s.WriteError(w, r, switchboard.Errorf(switchboard.EINVALID, "handle and account_id cannot be changed; create a new agent"))
		return
	}
	if err := validateAgentRequest(&b); err != nil {
		s.WriteError(w, r, err)
		return
	}
	upd := switchboard.AgentUpdate{
		Name: b.Name, Description: b.Description, Version: b.Version,
		Skills: b.Skills, ExtendedSkills: b.ExtendedSkills, AcceptsTasks: b.AcceptsTasks, Endpoint: b.Endpoint,
	}
	if b.Domain != nil {
		d, err := s.agentDomain(r, acct, *b.Domain)
		if err != nil {
			s.WriteError(w, r, err)
			return
		}
		upd.Domain, upd.DomainQuota = &d, s.domainQuota(acct)
	}
	if b.Pairing != nil {
		pm := switchboard.PairingMode(*b.Pairing)
		upd.Pairing = &pm
	}
	if b.MCP != nil {
		off := !*b.MCP
		upd.MCPOff = &off
	}
	mode := g.Mode
	if b.Mode != nil {
		mode = switchboard.DeliveryMode(*b.Mode)
		upd.Mode = &mode
	}
	endpoint := g.Endpoint
	if b.Endpoint != nil {
		endpoint = *b.Endpoint
	}
	if mode == switchboard.ModeWebhook && endpoint == "" {
		s.WriteError(w, r, switchboard.Errorf(switchboard.EINVALID, "a webhook agent needs an endpoint"))
		return
	}
	if err := s.checkFront(mode, &b, g); err != nil {
		s.WriteError(w, r, err)
		return
	}
	// The upstream is kept on the side of the agent's update where a
	// refused update leaves it as it was: an agent becoming a front gets
	// its upstream first (unused while the update is refused), a front
	// keeps its upstream until the rest of the update (a domain already
	// taken, say) is accepted.
	wasFront := g.Mode == switchboard.ModeFront
	if !wasFront {
		if err := s.putFront(r, g, &b); err != nil {
			s.WriteError(w, r, err)
			return
		}
	}
	var newSecret string
	if mode == switchboard.ModeWebhook && g.WebhookSecret == "" {
		newSecret = switchboard.NewWebhookSecret()
		upd.WebhookSecret = &newSecret
	}
	// Connections and dispatchers reread the agent: accepts_tasks and mode
	// take effect at once.
	was := g
	g, err = s.Tasks.UpdateAgent(r.Context(), g.ID, upd)
	if newSecret != "" {
		s.Record(r, acct, switchboard.AuditTokenIssue, audit.Token(was.AccountID, "webhook_secret", "", "agent "+was.Handle), err)
	}
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	if wasFront {
		if err := s.putFront(r, g, &b); err != nil {
			s.WriteError(w, r, err)
			return
		}
	}
	v := s.viewAgent(r, g)
	v.WebhookSecret = newSecret
	httpapi.WriteJSON(w, http.StatusOK, v)
}

func (s *Face) handleDeleteAgent(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g, err := s.OwnedAgent(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	// Its connection closes and its streams end, on every instance.
	err = s.owners.DeleteAgent(r.Context(), g)
	s.Record(r, acct, switchboard.AuditAgentDelete, audit.Agent(g), err)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, ownerapi.AgentDeleted{Deleted: true, ID: g.ID, Handle: g.Handle})
}
