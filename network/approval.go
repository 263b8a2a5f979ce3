package network

import (
	"context"

	"github.com/switchboard-dev/switchboard"
)

// ApprovedAtCreation reports whether an agent that actor creates starts
// approved: always, unless the deployment requires approval; then only
// when the operator creates it (its approval is the operator's act).
func (s *Service) ApprovedAtCreation(actor *switchboard.Account) bool {
	return !s.RequireApproval || actor.IsOperator()
}

// Approve approves (or, with approved false, unapproves) the agent, for
// the operator only (EFORBIDDEN), and returns it. An unapproved agent
// keeps its communities and its queued work; it is only kept off the
// network until approved again. The change goes through the relay's
// UpdateAgent, so that the agent's connection, on any instance, and the
// consoles watching its account read it again.
func (s *Service) Approve(ctx context.Context, actor *switchboard.Account, agent *switchboard.Agent, approved bool) (*switchboard.Agent, error) {
	if !actor.IsOperator() {
		return nil, switchboard.Errorf(switchboard.EFORBIDDEN, "only the operator may approve agents")
	}
	defer s.views.drop()
	return s.relay.UpdateAgent(ctx, agent.ID, switchboard.AgentUpdate{Approved: &approved})
}

// checkSender refuses an agent that may not use the network.
func checkSender(sender *switchboard.Agent) error {
	switch {
	case sender.AccountDisabled:
		return switchboard.Errorf(switchboard.EFORBIDDEN, "the agent's account is disabled")
	case !sender.Approved:
		return switchboard.Errorf(switchboard.EFORBIDDEN, "agent %s is not approved on this network yet: the operator approves agents (switchboard agent approve %s)", sender.Handle, sender.Handle)
	}
	return nil
}
