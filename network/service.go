package network

import (
	"context"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// Defaults of Service's settings.
const (
	// DefaultReconnectGrace is how long after its socket dropped a
	// connector agent stays a candidate of discovery when no live one is.
	DefaultReconnectGrace = 5 * time.Second
	// DefaultHeartbeatInterval is the hub's heartbeat interval, which
	// decides how recently a session must have been renewed to be live.
	DefaultHeartbeatInterval = 15 * time.Second
	// maxLiveSlack bounds the time added to the heartbeat interval for the
	// renewal's own delay (see Service.Liveness).
	maxLiveSlack = 2 * time.Second
)

// Store is what the network reads and writes: communities and members,
// agents (to find a target by handle, to approve, to see which of an
// owner's are approved), and tasks (to route a follow-up to its task's
// agent).
type Store interface {
	switchboard.CommunityStore
	FindAgents(ctx context.Context, f switchboard.AgentFilter) ([]*switchboard.Agent, error)
	FindAgentByID(ctx context.Context, id string) (*switchboard.Agent, error)
	FindAgentByHandle(ctx context.Context, handle string) (*switchboard.Agent, error)
	UpdateAgent(ctx context.Context, id string, upd switchboard.AgentUpdate) (*switchboard.Agent, error)
	FindTaskByID(ctx context.Context, id a2a.TaskID) (*switchboard.Task, error)
}

// Relay is the task service as the network uses it (relay.Service): a
// message sent by an agent becomes a task like any peer's, and a change of
// an agent's approval is told to its connection and the consoles as any
// change of its settings is.
type Relay interface {
	UpdateAgent(ctx context.Context, id string, upd switchboard.AgentUpdate) (*switchboard.Agent, error)
	SendMessage(ctx context.Context, agent *switchboard.Agent, caller switchboard.Peer, req *a2a.SendMessageRequest, proto switchboard.ProtocolVersion) (*switchboard.Task, bool, error)
	SendMessageAndWait(ctx context.Context, agent *switchboard.Agent, caller switchboard.Peer, req *a2a.SendMessageRequest, proto switchboard.ProtocolVersion, wait context.Context) (*switchboard.Task, error)
}

// Service holds the rules of the network. Its settings are set before it
// is used; the same Service serves every face of an instance.
type Service struct {
	store Store
	relay Relay

	// Now returns the current time; tests may replace it.
	Now func() time.Time
	// RequireApproval makes agents start unapproved: only the operator's
	// approval lets them on the network (agents the operator creates are
	// approved at once).
	RequireApproval bool
	// HeartbeatInterval is the hub's: a connector agent is live when its
	// session was renewed within the last interval (see Liveness).
	HeartbeatInterval time.Duration
	// ReconnectGrace is how long after its socket dropped a connector
	// agent is still a candidate of discovery when no live one is (0: not
	// at all). Its task then waits for it durably.
	ReconnectGrace time.Duration
	// ViewTTL is how long a decision's view of its question's candidates
	// is used before the store ranks them again (0: every decision is the
	// store's one statement).
	ViewTTL time.Duration

	rr     roundRobin
	recent recentChoices
	views  views
}

// New returns a Service over the store and the task service.
func New(store Store, relay Relay) *Service {
	return &Service{store: store, relay: relay, Now: time.Now,
		HeartbeatInterval: DefaultHeartbeatInterval, ReconnectGrace: DefaultReconnectGrace, ViewTTL: DefaultViewTTL}
}

// Liveness returns the times that decide reach at now. A session is live
// when it was renewed within the last heartbeat interval, plus a quarter
// of one (at most 2 s) for the delay of the renewal itself: every
// instance renews the sessions it holds once an interval, and a session
// must not look gone for the milliseconds its renewal takes. A session
// renewed before that, or ended, less than ReconnectGrace ago is in its
// grace.
func (s *Service) Liveness(now time.Time) switchboard.Liveness {
	hb := s.HeartbeatInterval
	if hb <= 0 {
		hb = DefaultHeartbeatInterval
	}
	live := now.Add(-(hb + min(hb/4, maxLiveSlack)))
	if s.ReconnectGrace <= 0 {
		return switchboard.Liveness{LiveSince: live, GraceSince: live, EndedSince: now.Add(time.Nanosecond)}
	}
	return switchboard.Liveness{LiveSince: live, GraceSince: live.Add(-s.ReconnectGrace), EndedSince: now.Add(-s.ReconnectGrace)}
}

// ShareCommunity reports whether the two agents are in a community
// together: what lets them send each other work (and open sessions).
func (s *Service) ShareCommunity(ctx context.Context, agentA, agentB string) (bool, error) {
	return s.store.ShareCommunity(ctx, agentA, agentB)
}

// roundRobin keeps, per discovery question, the agent chosen last, so
// that equal candidates take turns. It is per instance: across instances
// the turns interleave.
type roundRobin struct {
	mu   sync.Mutex
	last map[string]string // guarded by mu: question → id of the agent chosen last
}

// maxQuestions bounds the questions remembered; past it they are all
// forgotten, which costs one turn out of order each.
const maxQuestions = 10000

func (r *roundRobin) cursor(key string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last[key]
}

func (r *roundRobin) chose(key, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil || len(r.last) >= maxQuestions {
		r.last = make(map[string]string)
	}
	r.last[key] = id
}
