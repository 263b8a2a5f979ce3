package accounts

import (
	"context"

	"github.com/switchboard-dev/switchboard"
)

// RotateAgentToken gives the agent a new agent token, whatever its mode,
// revoking the old one, and returns it once (only its hash is kept); the
// connections and network streams that hold the old one, on every
// instance, are closed. Every agent has an agent token: a connector agent
// holds its connection with it, and any agent sends on the network,
// follows its tasks and reads its directory with it (docs/network.md).
func (s *Service) RotateAgentToken(ctx context.Context, g *switchboard.Agent) (string, error) {
	return s.IssueAgentToken(ctx, g)
}

// IssueAgentToken gives the agent a new agent token, revoking any old
// one, whatever its mode (at its creation, or rotated), and returns it
// once.
func (s *Service) IssueAgentToken(ctx context.Context, g *switchboard.Agent) (string, error) {
	secret, hash := switchboard.NewToken(switchboard.TokenAgent)
	if err := s.tokens.CreateToken(ctx, &switchboard.Token{Hash: hash, Kind: switchboard.TokenAgent, AgentID: g.ID}, true); err != nil {
		return "", err
	}
	s.notify(ctx, switchboard.AgentChangeSubject(g.ID))
	return secret, nil
}

// DeleteAgent deletes the agent with its tokens, tasks and settings. Its
// connection, on every instance, closes, its peers' streams end, and the
// consoles watching its account drop it from their lists.
func (s *Service) DeleteAgent(ctx context.Context, g *switchboard.Agent) error {
	if err := s.agents.DeleteAgent(ctx, g.ID); err != nil {
		return err
	}
	s.notify(ctx, switchboard.AgentChangeSubject(g.ID))
	s.notify(ctx, switchboard.TokensSubject(g.ID))
	s.notify(ctx, switchboard.AccountAgentsSubject(g.AccountID))
	return nil
}
