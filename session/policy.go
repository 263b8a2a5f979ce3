package session

import (
	"context"

	"github.com/switchboard-dev/switchboard"
)

// Policy decides whether one agent may hold a live session with another:
// the network's rule is that they share a community. It is asked when a
// session is opened and when it is resumed. A nil Policy allows none.
type Policy interface {
	// MaySession reports whether from may open (or resume) a session with
	// to. An error refuses the session as an internal error.
	MaySession(ctx context.Context, from, to *switchboard.Agent) (bool, error)
}

// PolicyFunc adapts a function to a Policy.
type PolicyFunc func(ctx context.Context, from, to *switchboard.Agent) (bool, error)

// MaySession calls f.
func (f PolicyFunc) MaySession(ctx context.Context, from, to *switchboard.Agent) (bool, error) {
	return f(ctx, from, to)
}

// maySession asks the policy; without one, nothing is allowed.
func (s *Service) maySession(ctx context.Context, from, to *switchboard.Agent) (bool, error) {
	if s.Policy == nil {
		return false, nil
	}
	return s.Policy.MaySession(ctx, from, to)
}
