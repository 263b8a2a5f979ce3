package session

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/connproto"
)

// Defaults for Config fields left at zero.
const (
	DefaultWindowFrames  = 128
	DefaultWindowBytes   = 256 << 10
	DefaultGrace         = 5 * time.Second
	DefaultOpenTimeout   = 30 * time.Second
	DefaultResumeTimeout = 10 * time.Second
	DefaultKeepalive     = 5 * time.Second
	DefaultMaxSessions   = 64
)

// MaxMetadataBytes bounds the metadata of a SessionOpen.
const MaxMetadataBytes = 4 << 10

// Config tunes a Service. Zero values mean defaults.
type Config struct {
	// Window bounds each direction of a session: the frames (and their
	// bytes) sent and not yet taken in by the receiving agent. It bounds
	// the memory a session holds on the server whatever the agents do.
	Window connproto.SessionWindow
	// Grace is how long a session waits for an agent whose connection
	// dropped to come back and resume it.
	Grace time.Duration
	// OpenTimeout is how long an agent asked for a session has to answer.
	OpenTimeout time.Duration
	// ResumeTimeout is how long a SessionResume waits for the other end.
	ResumeTimeout time.Duration
	// Keepalive is how often the two ends of an idle session tell each
	// other that they are there; an end not heard from for three of them
	// is taken for gone (its instance stopped), and given the grace.
	Keepalive time.Duration
	// MaxSessions bounds the sessions one connection holds at a time.
	MaxSessions int
}

// Deps are what a Service needs.
type Deps struct {
	// Carrier carries the ends' messages between instances.
	Carrier switchboard.Carrier
	// Agents finds the agent asked for a session, and where it is
	// connected.
	Agents Agents
	// Policy says whether two agents may hold a session.
	Policy Policy
	Logger *slog.Logger
	// InstanceID names this instance, as in the sessions of the agents it
	// holds (switchboard.AgentSession.InstanceID).
	InstanceID string
	// OnClosed, if set, is called with the reason (a
	// connproto.SessionReason*) each time the service tells one of its
	// agents that a session ended, for metrics. It must return at once.
	OnClosed func(reason string)
}

// Agents is what the service reads of agents: sqlstore.DB implements it.
type Agents interface {
	FindAgentByHandle(ctx context.Context, handle string) (*switchboard.Agent, error)
	FindAgentByID(ctx context.Context, id string) (*switchboard.Agent, error)
	// FindSession returns the agent's connection (its AgentSession):
	// where, and until when.
	FindSession(ctx context.Context, agentID string) (*switchboard.AgentSession, error)
}

// Endpoint is one agent's connection as sessions reach it; the hub's
// connections implement it.
type Endpoint interface {
	// SessionAgent returns the connected agent.
	SessionAgent() *switchboard.Agent
	// SessionHolder names the connection: unique to it, and the Holder of
	// the agent's AgentSession while it holds it.
	SessionHolder() string
	// SessionWrite queues a frame for the connection's writer, without
	// blocking, and reports false when the connection is closing, or is
	// closed because what waits for it passed Service.QueueBound (the
	// windows bound what sessions queue, for agents that keep to them).
	SessionWrite(frame []byte) bool
}

// Service runs the live sessions of the agents connected to this
// instance: it opens them, passes their frames on in order within their
// windows, keeps them across reconnects within the grace, and closes them.
// Start it before the first connection, and Close it after the last.
type Service struct {
	Deps
	cfg Config

	mu     sync.Mutex
	ends   map[endKey]*end              // guarded by mu: the ends this instance holds
	byConn map[string]map[*end]struct{} // guarded by mu: the ends of each connection, by holder
	conns  map[string]Endpoint          // guarded by mu: the connections that said hello, by agent id
	sub    switchboard.Subscription     // guarded by mu: this instance's subject, while started
	stop   chan struct{}                // guarded by mu: closed by Close
	done   chan struct{}                // closed when the keepalive loop has ended
	closed bool                         // guarded by mu

	stats Stats // counters, atomic
}

// endKey names an end: the session and the agent whose end it is.
type endKey struct{ session, agent string }

// New returns a Service.
func New(deps Deps, cfg Config) *Service {
	if cfg.Window.Frames <= 0 {
		cfg.Window.Frames = DefaultWindowFrames
	}
	if cfg.Window.Bytes <= 0 {
		cfg.Window.Bytes = DefaultWindowBytes
	}
	cfg.Window.Bytes = max(cfg.Window.Bytes, connproto.MaxSessionFrameBytes)
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultGrace
	}
	if cfg.OpenTimeout <= 0 {
		cfg.OpenTimeout = DefaultOpenTimeout
	}
	if cfg.ResumeTimeout <= 0 {
		cfg.ResumeTimeout = DefaultResumeTimeout
	}
	if cfg.Keepalive <= 0 {
		cfg.Keepalive = DefaultKeepalive
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.InstanceID == "" {
		deps.InstanceID = switchboard.NewID()
	}
	return &Service{Deps: deps, cfg: cfg, ends: make(map[endKey]*end), byConn: make(map[string]map[*end]struct{}),
		conns: make(map[string]Endpoint)}
}

// Config returns the service's settings, defaults filled in.
func (s *Service) Config() Config { return s.cfg }

// QueueBound is what the frames queued for one connection's writer may
// cost, in bytes, at most: far above what its sessions' windows let them
// queue (a window's bytes and frames each way of each session, and the
// sessions' replies and notices besides). A connection that makes the
// server queue more is not keeping to the windows (it acknowledges
// frames it has not read, or asks for answers it does not read), and is
// closed as too slow.
func (s *Service) QueueBound() int {
	perSession := 2 * (s.cfg.Window.Bytes + s.cfg.Window.Frames*256)
	return s.cfg.MaxSessions*perSession + 1<<20
}

// Start subscribes to this instance's subject and starts the keepalive
// loop. It fails when the carrier is closed.
func (s *Service) Start(ctx context.Context) error {
	sub, err := s.Carrier.Subscribe(ctx, switchboard.LiveSessionInstanceSubject(s.InstanceID), s.onInstanceMessage)
	if err != nil {
		return fmt.Errorf("session: subscribe to this instance's subject: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.sub != nil {
		sub.Close()
		return nil
	}
	s.sub, s.stop, s.done = sub, make(chan struct{}), make(chan struct{})
	go s.keepalive(s.stop, s.done)
	return nil
}

// Close stops the service: it forgets every end it holds, without telling
// their peers (the hub's shutdown, which comes first, told them that the
// connections dropped). It is safe to call more than once.
func (s *Service) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	sub, stop, done := s.sub, s.stop, s.done
	ends := make([]*end, 0, len(s.ends))
	for _, e := range s.ends {
		ends = append(ends, e)
	}
	s.mu.Unlock()
	if sub != nil {
		sub.Close()
		close(stop)
		<-done
	}
	for _, e := range ends {
		e.mu.Lock()
		e.finishLocked()
		e.mu.Unlock()
		s.forget(e)
	}
}

// Connect tells the service that a connection said hello: it may be
// offered sessions from now on. A newer connection of the agent takes
// the place of an older one.
func (s *Service) Connect(ep Endpoint) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conns[ep.SessionAgent().ID] = ep
}

// Disconnect tells the service that a connection ended. Its sessions wait
// for the agent to resume them within the grace; the ones still being
// opened fail.
func (s *Service) Disconnect(ep Endpoint) {
	holder := ep.SessionHolder()
	s.mu.Lock()
	if cur := s.conns[ep.SessionAgent().ID]; cur != nil && cur.SessionHolder() == holder {
		delete(s.conns, ep.SessionAgent().ID)
	}
	ends := make([]*end, 0, len(s.byConn[holder]))
	for e := range s.byConn[holder] {
		ends = append(ends, e)
	}
	s.mu.Unlock()
	for _, e := range ends {
		e.detach(holder)
	}
}

// Handle handles a session method an agent sent on its connection ep (see
// connproto.IsSessionMethod): it answers through ep. id is the request's
// id, empty for a notification.
func (s *Service) Handle(ctx context.Context, ep Endpoint, method string, id, params json.RawMessage) {
	switch method {
	case connproto.MethodSessionOpen:
		s.open(ctx, ep, id, params)
	case connproto.MethodSessionFrame:
		s.frameFromAgent(ep, id, params)
	case connproto.MethodSessionAck:
		s.ackFromAgent(ep, params)
	case connproto.MethodSessionClose:
		s.closeFromAgent(ep, id, params)
	case connproto.MethodSessionResume:
		s.resume(ctx, ep, id, params)
	default:
		replyError(ep, id, connproto.CodeMethodNotFound, "method not found: "+switchboard.Truncate(method, 64))
	}
}

// connOf returns the connection of agentID on this instance, if it said
// hello.
func (s *Service) connOf(agentID string) Endpoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns[agentID]
}

// end returns the end of session sessionID that agentID holds here.
func (s *Service) end(sessionID, agentID string) *end {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ends[endKey{sessionID, agentID}]
}

// register records a new end held by its connection. It refuses when the
// connection holds as many ends as it may, or the service is closed; an
// end it replaces (the same agent's end of the same session, on an older
// connection) is returned, to be dropped by the caller.
func (s *Service) register(e *end, holder string) (old *end, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || len(s.byConn[holder]) >= s.cfg.MaxSessions {
		return nil, false
	}
	old = s.ends[e.key]
	s.ends[e.key] = e
	set := s.byConn[holder]
	if set == nil {
		set = make(map[*end]struct{})
		s.byConn[holder] = set
	}
	set[e] = struct{}{}
	s.stats.open.Add(1)
	return old, true
}

// forget removes an end that finished.
func (s *Service) forget(e *end) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ends[e.key] == e {
		delete(s.ends, e.key)
	}
	if set := s.byConn[e.holder]; set != nil {
		if _, ok := set[e]; ok {
			delete(set, e)
			s.stats.open.Add(-1)
		}
		if len(set) == 0 {
			delete(s.byConn, e.holder)
		}
	}
}

// publish sends an envelope to subject, logging a failure (the session's
// keepalive and resends recover what is lost).
func (s *Service) publish(subject string, data []byte) {
	if err := s.Carrier.Publish(context.Background(), subject, data); err != nil {
		s.Logger.Debug("session: publish", "subject", subject, "err", err)
	}
}

// Stats are the service's counters.
type Stats struct {
	open     atomic.Int64  // ends held now
	opened   atomic.Uint64 // sessions opened (accepted) with an agent of this instance asking
	frames   atomic.Uint64 // frames passed on to agents of this instance
	buffered atomic.Int64  // frames passed on to agents of this instance and not yet taken in
}

// Counts is a snapshot of Stats.
type Counts struct {
	// Ends is the number of session ends this instance holds.
	Ends int64
	// Opened counts the sessions agents of this instance opened.
	Opened uint64
	// Frames counts the frames passed on to agents of this instance.
	Frames uint64
	// Buffered is the number of frames passed on to agents of this
	// instance that they have not acknowledged yet: at most the window
	// per end, whatever the agents do.
	Buffered int64
}

// Counts returns the service's counters.
func (s *Service) Counts() Counts {
	return Counts{Ends: s.stats.open.Load(), Opened: s.stats.opened.Load(), Frames: s.stats.frames.Load(), Buffered: s.stats.buffered.Load()}
}
