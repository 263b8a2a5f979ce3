package accounts

import (
	"context"

	"github.com/switchboard-dev/switchboard"
)

// RotateAgentToken gives a connector agent a new agent token, revoking the
// old one, and returns it once (only its hash is kept); the connections
// that hold the old one, on every instance, are closed. It returns
// EINVALID for an agent in another mode.
func (s *Service) RotateAgentToken(ctx context.Context, g *switchboard.Agent) (string, error) {
	if g.Mode != switchboard.ModeConnector {
		return "", switchboard.Errorf(switchboard.EINVALID, "agent tokens are for connector agents; %s is in %s mode", g.Handle, g.Mode)
	}
	return s.IssueAgentToken(ctx, g)
}

// IssueAgentToken gives the agent a new agent token, revoking any old
// one, whatever its mode (a connector agent at its creation, or one
// switched to connector mode), and returns it once.
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
