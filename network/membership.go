package network

import (
	"context"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard"
)

// NormalizeName lowercases a community name and checks that it is a DNS
// label, as a handle is: 1 to 63 characters of a-z, 0-9 and '-', not at
// either end, and not shaped like a UUID. Space around it is trimmed; a
// control or bidirectional formatting character left in it is
// EUNPROCESSABLE (switchboard.CheckName), any other fault EINVALID.
func NormalizeName(name string) (string, error) {
	if err := switchboard.CheckName("community name", strings.TrimSpace(name)); err != nil {
		return "", err
	}
	n, err := switchboard.NormalizeHandle(name)
	if err != nil {
		return "", switchboard.Errorf(switchboard.EINVALID, "community name: %s", switchboard.ErrorMessage(err))
	}
	return n, nil
}

// Join puts the agent in the community, which comes into being (open) if
// it does not exist, and reports whether it joined (false: it was in it
// already). The caller has checked that actor may manage the agent. A
// closed community takes new members from the operator only (EFORBIDDEN).
func (s *Service) Join(ctx context.Context, actor *switchboard.Account, agent *switchboard.Agent, community string) (bool, error) {
	name, err := NormalizeName(community)
	if err != nil {
		return false, err
	}
	defer s.views.drop()
	return s.store.JoinCommunity(ctx, agent.ID, name, actor.IsOperator())
}

// Leave takes the agent out of the community (ENOTFOUND when it is not
// in it). An owner may always take its agent out, closed community or
// not.
func (s *Service) Leave(ctx context.Context, agent *switchboard.Agent, community string) error {
	name, err := NormalizeName(community)
	if err != nil {
		return err
	}
	defer s.views.drop()
	return s.store.LeaveCommunity(ctx, agent.ID, name)
}

// Configure creates the community or changes whether it is closed, for
// the operator only (EFORBIDDEN), and reports whether it created it.
// Closing a community keeps its members.
func (s *Service) Configure(ctx context.Context, actor *switchboard.Account, c *switchboard.Community) (bool, error) {
	if !actor.IsOperator() {
		return false, switchboard.Errorf(switchboard.EFORBIDDEN, "only the operator may configure communities")
	}
	name, err := NormalizeName(c.Name)
	if err != nil {
		return false, err
	}
	c.Name = name
	return s.store.SaveCommunity(ctx, c)
}

// Communities returns the communities actor can see, with their member
// counts: every one for the operator, those with an agent of the account
// for an owner.
func (s *Service) Communities(ctx context.Context, actor *switchboard.Account) ([]*switchboard.Community, error) {
	if actor.IsOperator() {
		return s.store.FindCommunities(ctx, "")
	}
	return s.store.FindCommunities(ctx, actor.ID)
}

// Community returns the community, or ENOTFOUND; name is normalized
// first.
func (s *Service) Community(ctx context.Context, name string) (*switchboard.Community, error) {
	n, err := NormalizeName(name)
	if err != nil {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "community not found")
	}
	return s.store.FindCommunity(ctx, n)
}

// LookupCommunity returns the community without its member count
// (Members is 0), or ENOTFOUND; name is normalized first. It is what a
// request at the community's address reads.
func (s *Service) LookupCommunity(ctx context.Context, name string) (*switchboard.Community, error) {
	n, err := NormalizeName(name)
	if err != nil {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "community not found")
	}
	return s.store.LookupCommunity(ctx, n)
}

// ManagesCommunity reports whether actor may issue peer tokens of the
// community's address: the operator, and the owners of its approved
// members (an owner whose agents there all wait for the operator's
// approval may not open the community to peers).
func (s *Service) ManagesCommunity(ctx context.Context, actor *switchboard.Account, name string) (bool, error) {
	if actor.IsOperator() {
		return true, nil
	}
	mine, err := s.ownerCommunities(ctx, actor.ID)
	if err != nil {
		return false, err
	}
	return slices.Contains(mine, name), nil
}

// AgentCommunities returns each agent's communities, sorted.
func (s *Service) AgentCommunities(ctx context.Context, agentIDs ...string) (map[string][]string, error) {
	return s.store.FindAgentCommunities(ctx, agentIDs)
}
