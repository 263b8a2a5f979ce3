package relay

import (
	"context"

	"github.com/switchboard-dev/switchboard"
)

// UpdateAgent writes a change of the agent's settings (the owner API's
// PATCH and the console's toggle both come here) and tells whoever acts on
// them: the agent's connection, on any instance, reads the agent again, so
// that accepts_tasks and the mode take effect at once; the dispatchers
// claim again; the consoles watching its account read it again.
func (s *Service) UpdateAgent(ctx context.Context, id string, upd switchboard.AgentUpdate) (*switchboard.Agent, error) {
	g, err := s.agents.UpdateAgent(ctx, id, upd)
	if err != nil {
		return nil, err
	}
	s.notify(ctx, switchboard.AgentChangeSubject(g.ID))
	s.notify(ctx, switchboard.DispatchSubject(switchboard.ModeWebhook))
	s.notify(ctx, switchboard.DispatchSubject(switchboard.ModeFront))
	s.notify(ctx, switchboard.AccountAgentsSubject(g.AccountID))
	return g, nil
}
