package switchboard

import (
	"context"
	"time"
)

// Peer is an authenticated caller of an address. ID comes from the
// credential it presented and stays the same when that credential is
// rotated; Label is its human name. A peer sees only its own tasks and
// contexts.
type Peer struct {
	// AgentID is the agent whose address the peer calls; empty for a peer
	// that is not one agent's (a community's peer, an agent following the
	// tasks it sent), which sees its tasks on every agent.
	AgentID string
	ID      string
	Label   string
	Kind    PeerKind
}

// PeerKind says what stands behind a peer's ID and Label.
type PeerKind string

// Peer kinds.
const (
	// PeerOutside holds a peer token of the agent's address: ID is the
	// token's peer id, Label its label.
	PeerOutside PeerKind = ""
	// PeerAgent is an agent of this deployment sending work to another:
	// ID is its agent id and Label its handle, both verified.
	PeerAgent PeerKind = "agent"
	// PeerCommunity holds a peer token of a community's address: ID is the
	// token's peer id, Label its label.
	PeerCommunity PeerKind = "community"
)

// Key returns a string that identifies the peer across agents, for rate
// limits and logs: an agent or a community's peer is one peer wherever
// its tasks go.
func (p Peer) Key() string {
	if p.Kind == PeerOutside {
		return p.AgentID + "/" + p.ID
	}
	return string(p.Kind) + "/" + p.ID
}

// RateLimiter counts requests per key in fixed windows.
type RateLimiter interface {
	// Allow counts one request for key. It reports whether the request is
	// within the limit and, when it is not, how long until the window that
	// refused it ends.
	//
	// A limiter fails open: when it cannot count (its store failed), it
	// returns ok with the error, having logged and counted the failure
	// itself, and the caller lets the request through. A store outage must
	// not refuse every peer; it lifts the limit for its length, which the
	// operator sees in the log and in switchboard_rate_limit_failures_total.
	Allow(ctx context.Context, key string) (ok bool, retryAfter time.Duration, err error)
}
