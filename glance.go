package switchboard

import (
	"context"
	"time"
)

// AgentGlance is an agent as the console's list shows it: its settings
// that the list names, and what it is doing; read for many agents in one
// query.
type AgentGlance struct {
	ID, AccountID, Handle, Name, Description string
	Mode                                     DeliveryMode
	AcceptsTasks, Approved                   bool
	// SessionExpiresAt is when the agent's connection session expires
	// (zero when it has none): the agent is live while it lies ahead.
	SessionExpiresAt time.Time
	// Waiting counts the agent's tasks that wait for it (submitted or
	// working: its inbox).
	Waiting int
	// LastTaskAt is when its newest task was created (zero: none).
	LastTaskAt time.Time
}

// AgentGlanceStore reads the console's list of agents.
type AgentGlanceStore interface {
	// FindAgentGlances returns the glance of every agent of the account
	// (every agent when accountID is ""), by handle.
	FindAgentGlances(ctx context.Context, accountID string) ([]*AgentGlance, error)
}
