package ownerhttp

import (
	"fmt"
	"net/http"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/audit"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// The owner and operator routes of the network (docs/network.md):
// approval, membership, communities and their peer tokens.

// networkAgent is ownedAgent for the network's routes.
func (s *Face) networkAgent(r *http.Request, acct *switchboard.Account) (*switchboard.Agent, error) {
	return s.OwnedAgent(r, acct)
}

func (s *Face) handleApprove(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	s.approve(w, r, acct, true)
}

func (s *Face) handleUnapprove(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	s.approve(w, r, acct, false)
}

func (s *Face) approve(w http.ResponseWriter, r *http.Request, acct *switchboard.Account, approved bool) {
	g, err := s.networkAgent(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	action := switchboard.AuditAgentApprove
	if !approved {
		action = switchboard.AuditAgentUnapprove
	}
	// Its connection and the consoles reread it (network.Service.Approve).
	changed, err := s.Network.Approve(r.Context(), acct, g, approved)
	s.Record(r, acct, action, audit.Agent(g), err)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	g = changed
	httpapi.WriteJSON(w, http.StatusOK, s.viewAgent(r, g))
}

func (s *Face) handleJoinCommunity(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g, err := s.networkAgent(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	joined, err := s.Network.Join(r.Context(), acct, g, r.PathValue("name"))
	s.Record(r, acct, switchboard.AuditCommunityJoin, communityTarget(g, r.PathValue("name")), err)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	status := http.StatusOK
	if joined {
		status = http.StatusCreated
	}
	httpapi.WriteJSON(w, status, s.viewAgent(r, g))
}

func (s *Face) handleLeaveCommunity(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g, err := s.networkAgent(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	err = s.Network.Leave(r.Context(), g, r.PathValue("name"))
	s.Record(r, acct, switchboard.AuditCommunityLeave, communityTarget(g, r.PathValue("name")), err)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, s.viewAgent(r, g))
}

// communityTarget is the audit log's target of an agent's membership of a
// community: the community, in the agent's account.
func communityTarget(g *switchboard.Agent, community string) audit.Target {
	return audit.Target{AccountID: g.AccountID, Kind: audit.KindCommunity, ID: community, Detail: "agent " + g.Handle}
}

func (s *Face) handleListCommunities(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	cs, err := s.Network.Communities(r.Context(), acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	out := make([]ownerapi.Community, 0, len(cs))
	for _, c := range cs {
		out = append(out, s.viewCommunity(r, c))
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}

func (s *Face) viewCommunity(r *http.Request, c *switchboard.Community) ownerapi.Community {
	addr := s.CommunityURL(r, c.Name)
	return ownerapi.Community{Name: c.Name, Closed: c.Closed, Members: c.Members, Address: addr,
		AgentCard: addr + "/.well-known/agent-card.json", CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

func (s *Face) handleConfigureCommunity(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	var body ownerapi.CommunitySettings
	if err := s.DecodeJSON(w, r, &body); err != nil {
		s.WriteError(w, r, err)
		return
	}
	c := &switchboard.Community{Name: r.PathValue("name")}
	if body.Closed != nil {
		c.Closed = *body.Closed
	} else if cur, err := s.Network.Community(r.Context(), c.Name); err == nil {
		c.Closed = cur.Closed
	}
	created, err := s.Network.Configure(r.Context(), acct, c)
	s.Record(r, acct, switchboard.AuditCommunityChange, audit.Target{Kind: audit.KindCommunity, ID: c.Name,
		Detail: fmt.Sprintf("closed %t, created %t", c.Closed, created)}, err)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	httpapi.WriteJSON(w, status, s.viewCommunity(r, c))
}

// managedCommunity returns the community named by the path if acct may
// issue its peer tokens (the operator, an owner of a member); otherwise it
// reports the community as not found.
func (s *Face) managedCommunity(r *http.Request, acct *switchboard.Account) (*switchboard.Community, error) {
	c, err := s.Network.Community(r.Context(), r.PathValue("name"))
	if err != nil {
		return nil, err
	}
	ok, err := s.Network.ManagesCommunity(r.Context(), acct, c.Name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "community not found")
	}
	return c, nil
}

// handleIssueCommunityToken issues a peer token of a community's address.
// The token belongs to the community; the issuing account lists and
// revokes it (the operator every one).
func (s *Face) handleIssueCommunityToken(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	c, err := s.managedCommunity(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	v := s.viewCommunity(r, c)
	s.issuePeerToken(w, r, acct, switchboard.Token{AccountID: acct.ID, Community: c.Name}, switchboard.CommunityTokensSubject(c.Name),
		ownerapi.Token{Address: v.Address, AgentCard: v.AgentCard}, audit.Token(acct.ID, switchboard.TokenPeer, "", "community "+c.Name))
}

// communityTokens returns the filter of the community's peer tokens acct
// manages: those it issued (every one, for the operator).
func communityTokens(acct *switchboard.Account, name string) switchboard.TokenFilter {
	kind := switchboard.TokenPeer
	f := switchboard.TokenFilter{Kind: &kind, Community: &name}
	if !acct.IsOperator() {
		f.AccountID = &acct.ID
	}
	return f
}

func (s *Face) handleListCommunityTokens(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	c, err := s.issuedCommunity(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	s.listPeerTokens(w, r, communityTokens(acct, c.Name))
}

func (s *Face) handleRevokeCommunityToken(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	c, err := s.issuedCommunity(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	s.revokePeerTokens(w, r, acct, communityTokens(acct, c.Name), switchboard.CommunityTokensSubject(c.Name),
		audit.Token(acct.ID, switchboard.TokenPeer, "", "community "+c.Name))
}

// issuedCommunity returns the community named by the path, whose tokens an
// account lists and revokes (those it issued): one it manages, or one it
// issued tokens of before its agents left. Any other reads as not found.
func (s *Face) issuedCommunity(r *http.Request, acct *switchboard.Account) (*switchboard.Community, error) {
	c, err := s.managedCommunity(r, acct)
	if switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		return c, err
	}
	c, cerr := s.Network.Community(r.Context(), r.PathValue("name"))
	if cerr != nil {
		return nil, err
	}
	issued, ferr := s.Tokens.FindTokens(r.Context(), communityTokens(acct, c.Name))
	if ferr != nil {
		return nil, ferr
	}
	if len(issued) == 0 {
		return nil, err
	}
	return c, nil
}

// approvedAtCreation says whether an agent acct creates starts approved.
func (s *Face) approvedAtCreation(acct *switchboard.Account) bool {
	return s.members.ApprovedAtCreation(acct)
}
