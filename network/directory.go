package network

import (
	"context"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// Directory limits.
const (
	DefaultDirectoryLimit = 100
	MaxDirectoryLimit     = 500
)

// Viewer is who asks for a directory: an agent (by its agent token) or an
// account (by its owner token). Exactly one is set.
type Viewer struct {
	Agent   *switchboard.Agent
	Account *switchboard.Account
}

// DirectoryQuery narrows a directory.
type DirectoryQuery struct {
	Community string // one of the viewer's communities; empty: all of them
	Skill     string // a card skill's id or tag
	OnlyLive  bool
	After     string // continue after this handle
	Limit     int    // 0: DefaultDirectoryLimit; at most MaxDirectoryLimit
}

// Directory lists the agents the viewer can see, by handle: for an
// agent, the other members of its communities; for an owner, the members
// of the communities its approved agents are in; for the operator, the
// members of every community. Each shows only the communities the viewer
// shares (every one, for the operator), and its reach now. A community the
// viewer is not in is ENOTFOUND. An agent that may not use the network
// (unapproved, or of a disabled account) reads none of it: EFORBIDDEN, as
// for its sends.
func (s *Service) Directory(ctx context.Context, v Viewer, q DirectoryQuery) ([]*switchboard.Member, error) {
	if v.Agent != nil {
		if err := checkSender(v.Agent); err != nil {
			return nil, err
		}
	}
	if q.Limit <= 0 {
		q.Limit = DefaultDirectoryLimit
	}
	q.Limit = min(q.Limit, MaxDirectoryLimit)
	communities, err := s.visible(ctx, v)
	if err != nil {
		return nil, err
	}
	if q.Community != "" {
		name, err := NormalizeName(q.Community)
		if err != nil {
			return nil, err
		}
		if communities != nil && !slices.Contains(communities, name) {
			return nil, switchboard.Errorf(switchboard.ENOTFOUND, "community %q not found among yours", name)
		}
		if communities == nil {
			if _, err := s.store.LookupCommunity(ctx, name); err != nil {
				return nil, err
			}
		}
		communities = []string{name}
	}
	f := switchboard.MemberFilter{Communities: communities, Skill: strings.TrimSpace(q.Skill),
		Liveness: s.Liveness(s.Now()), OnlyLive: q.OnlyLive, After: strings.ToLower(q.After), Limit: q.Limit}
	if v.Agent != nil {
		f.ExcludeAgentID = v.Agent.ID
	}
	return s.store.FindMembers(ctx, f)
}

// visible returns the communities the viewer sees members of: nil for
// the operator (all of them), never nil otherwise.
func (s *Service) visible(ctx context.Context, v Viewer) ([]string, error) {
	if v.Agent != nil {
		m, err := s.store.FindAgentCommunities(ctx, []string{v.Agent.ID})
		if err != nil {
			return nil, err
		}
		return append([]string{}, m[v.Agent.ID]...), nil
	}
	if v.Account.IsOperator() {
		return nil, nil
	}
	return s.ownerCommunities(ctx, v.Account.ID)
}

// ownerCommunities returns the communities, sorted, that the account's
// approved agents are in: the part of the network its owner sees and
// manages. An agent waiting for the operator's approval opens no part of
// the network to its owner, as it opens none to itself.
func (s *Service) ownerCommunities(ctx context.Context, accountID string) ([]string, error) {
	agents, err := s.store.FindAgents(ctx, switchboard.AgentFilter{AccountID: &accountID})
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, g := range agents {
		if g.Approved {
			ids = append(ids, g.ID)
		}
	}
	out := []string{}
	if len(ids) == 0 {
		return out, nil
	}
	in, err := s.store.FindAgentCommunities(ctx, ids)
	if err != nil {
		return nil, err
	}
	for _, cs := range in {
		out = append(out, cs...)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// CommunitySkills returns the union of the public skills of the members
// of the community that discovery could choose now (approved, accepting
// tasks, live), each skill id once, in the members' handle order: the
// skills of the community's card.
func (s *Service) CommunitySkills(ctx context.Context, community string) ([]a2a.AgentSkill, error) {
	ms, err := s.store.FindMembers(ctx, switchboard.MemberFilter{Communities: []string{community},
		Liveness: s.Liveness(s.Now()), OnlyLive: true, Limit: MaxDirectoryLimit})
	if err != nil {
		return nil, err
	}
	var out []a2a.AgentSkill
	seen := make(map[string]bool)
	for _, m := range ms {
		if !m.Agent.Approved || !m.Agent.AcceptsTasks {
			continue
		}
		for _, sk := range m.Agent.Skills {
			if !seen[sk.ID] {
				seen[sk.ID] = true
				out = append(out, sk)
			}
		}
	}
	return out, nil
}
