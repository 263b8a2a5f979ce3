package network

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// A message sent again (a client's retry: the same peer, the same message
// id) must reach the agent it reached the first time, where the task
// service recognises it and answers with its task. Discovery would not
// choose that agent again (the turns move on), so the Service remembers
// its recent choices, per instance: a retry that reaches another instance
// may start a second task there (docs/network.md).

// Bounds of the choices remembered.
const (
	rememberFor      = 10 * time.Minute
	maxRememberedFor = 100000
)

// recentChoices remembers which agent recent messages went to.
type recentChoices struct {
	mu     sync.Mutex
	chosen map[string]recentChoice // guarded by mu: peer key and message id → choice
}

type recentChoice struct {
	agentID string
	at      time.Time
}

func (r *recentChoices) get(key string, now time.Time) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.chosen[key]
	if !ok || now.Sub(c.at) > rememberFor {
		return ""
	}
	return c.agentID
}

func (r *recentChoices) put(key, agentID string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.chosen == nil {
		r.chosen = make(map[string]recentChoice)
	}
	if len(r.chosen) >= maxRememberedFor {
		for k, c := range r.chosen {
			if now.Sub(c.at) > rememberFor {
				delete(r.chosen, k)
			}
		}
		if len(r.chosen) >= maxRememberedFor {
			clear(r.chosen)
		}
	}
	r.chosen[key] = recentChoice{agentID: agentID, at: now}
}

// DiscoverFor is Discover for a message: the same message (the peer with
// key peerKey, the same message id) sent again within ten minutes to this
// instance goes where it went the first time, so that the task service
// answers it with its task. When that agent can no longer be reached
// (deleted, its account disabled, unapproved, or no longer in one of q's
// communities), the retry is ENOAGENT: it never becomes new work on
// another agent. Without a message id it is Discover.
func (s *Service) DiscoverFor(ctx context.Context, peerKey, messageID string, q switchboard.DiscoveryQuery) (*switchboard.Candidate, error) {
	if messageID == "" {
		return s.Discover(ctx, q)
	}
	key := peerKey + "\x00" + messageID
	now := s.Now()
	if id := s.recent.get(key, now); id != "" {
		return s.rememberedChoice(ctx, id, q)
	}
	c, err := s.Discover(ctx, q)
	if err != nil {
		return nil, err
	}
	s.recent.put(key, c.Agent.ID, now)
	return c, nil
}

// rememberedChoice returns the agent a retry's first message went to, if
// it may still be reached the way q asks; ENOAGENT otherwise.
func (s *Service) rememberedChoice(ctx context.Context, id string, q switchboard.DiscoveryQuery) (*switchboard.Candidate, error) {
	gone := switchboard.Errorf(switchboard.ENOAGENT, "the agent this message went to can no longer be reached; send it again with a new message id to start new work")
	g, err := s.store.FindAgentByID(ctx, id)
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
		return nil, gone
	}
	if err != nil {
		return nil, err
	}
	if g.AccountDisabled || !g.Approved {
		return nil, gone
	}
	where := q.Communities
	ids := []string{g.ID}
	if len(where) == 0 {
		ids = append(ids, q.SenderID)
	}
	in, err := s.store.FindAgentCommunities(ctx, ids)
	if err != nil {
		return nil, err
	}
	if len(where) == 0 {
		where = in[q.SenderID]
	}
	for _, c := range where {
		if slices.Contains(in[g.ID], c) {
			return &switchboard.Candidate{Agent: g}, nil
		}
	}
	return nil, gone
}
