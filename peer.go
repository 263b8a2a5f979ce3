package switchboard

import (
	"context"
	"time"
)

// Peer is an authenticated outside caller of one agent's address. ID comes
// from the token it presented and stays the same when that token is
// rotated; Label is the token's human name. A peer sees only its own tasks
// and contexts.
type Peer struct {
	AgentID string
	ID      string
	Label   string
}

// Key returns a string that identifies the peer across agents, for rate
// limits and logs.
func (p Peer) Key() string { return p.AgentID + "/" + p.ID }

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
