package switchboard

import (
	"context"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// AgentSession is the live connection of a connector agent as every
// instance sees it: which connection holds the agent, on which instance,
// and until when, unless renewed. An agent has at most one session; a new
// connection replaces the old one wherever it is.
type AgentSession struct {
	AgentID     string
	Holder      string // the connection's id; offers it claims carry it
	InstanceID  string
	Client      string // the connector software, as it said in hello
	ConnectedAt time.Time
	ExpiresAt   time.Time
}

// SessionStore keeps agent sessions.
type SessionStore interface {
	// OpenSession makes s the agent's session. When it replaces another
	// connection's session, that connection's unacknowledged offers go back
	// to the queue in the same transaction, and its holder is returned.
	OpenSession(ctx context.Context, s *AgentSession) (replaced string, err error)

	// ConnectSession is OpenSession followed by DeliveryStore.RequeueUnheld
	// of the session's agent, in one transaction: what a connection's hello
	// does. It returns the replaced holder and how many deliveries it
	// queued again.
	ConnectSession(ctx context.Context, s *AgentSession, holding []a2a.TaskID, deadline time.Time) (replaced string, requeued int, err error)

	// RenewSessions moves the expiry of every session held by one of
	// holders (connection ids; an agent's session names one) and returns
	// the holders whose session it renewed. A holder missing from the
	// answer no longer holds its agent's session.
	RenewSessions(ctx context.Context, holders []string, expiresAt time.Time) ([]string, error)

	// CloseSessions ends the sessions held by holders (connection ids; an
	// agent's session names one): a session a newer connection took over
	// names another holder and stays.
	CloseSessions(ctx context.Context, holders []string) error

	// FindSession returns the agent's session, expired or not; ENOTFOUND
	// when it has none.
	FindSession(ctx context.Context, agentID string) (*AgentSession, error)
}

// Live reports whether the session is current at now.
func (s *AgentSession) Live(now time.Time) bool { return now.Before(s.ExpiresAt) }
