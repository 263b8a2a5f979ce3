package hub

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/connproto"
	"github.com/switchboard-dev/switchboard/publicurl"
	"github.com/switchboard-dev/switchboard/session"
	"github.com/switchboard-dev/switchboard/tracing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/coder/websocket"
	"github.com/switchboard-dev/switchboard"
)

// Defaults for Config fields left at zero.
const (
	DefaultHeartbeatInterval = 15 * time.Second
	DefaultHelloTimeout      = 10 * time.Second
	DefaultWriteTimeout      = 10 * time.Second
	DefaultQueueSize         = 256
	DefaultMaxInflight       = 64
	DefaultMaxFrameBytes     = 4 << 20
	DefaultPoll              = 5 * time.Second
	DefaultMaxSendBytes      = 1 << 20
)

// Config tunes a Hub. Zero values mean defaults.
type Config struct {
	// HeartbeatInterval is how often the server pings each agent; an agent
	// that does not answer a ping within one more interval is dropped, so a
	// dead peer is found within two intervals.
	HeartbeatInterval time.Duration
	// HelloTimeout is how long a new connection may take to say hello.
	HelloTimeout time.Duration
	// WriteTimeout bounds one write to a socket.
	WriteTimeout time.Duration
	// QueueSize bounds the answers waiting to be written to one agent; an
	// agent that lets it fill is disconnected as too slow.
	QueueSize int
	// MaxInflight bounds the offers one connection holds unacknowledged.
	MaxInflight int
	// MaxFrameBytes bounds one frame from an agent.
	MaxFrameBytes int64
	// Poll is how often a connection looks for queued work without a hint.
	Poll time.Duration
	// AckTimeout is how long the server waits for an agent to acknowledge
	// an offer (the task service's setting), told to agents in hello.
	AckTimeout time.Duration
	// MaxSendBytes bounds the params of an agent's own SendMessage, as the
	// HTTP front door bounds a request body (default 1 MiB).
	MaxSendBytes int
	// HoldWorking is how long an answer that says only "working" waits for
	// the update that ends the turn, to be written with it (held.go;
	// default 20 ms).
	HoldWorking time.Duration
	// NoDirectOffers leaves every new task for the agents connected here
	// queued for a claim, as on an instance they are not connected to,
	// instead of offering it as it is created (Service.OfferDirectly). For
	// measuring and testing the claim path.
	NoDirectOffers bool
}

// Service is the task protocol as the hub uses it. *relay.Service
// implements it.
type Service interface {
	ConnectAgent(ctx context.Context, agent *switchboard.Agent, session *switchboard.AgentSession, holding []a2a.TaskID) error
	RenewAgentSessions(ctx context.Context, holders []string, until time.Time) ([]string, error)
	AgentsWithDueWork(ctx context.Context, agentIDs []string) ([]string, error)
	AgentSession(ctx context.Context, agentID string) (*switchboard.AgentSession, error)
	DisconnectAgents(ctx context.Context, holders []string) error
	ClaimOffers(ctx context.Context, agent *switchboard.Agent, holder string, max int) ([]*switchboard.Offer, error)
	AckOffer(ctx context.Context, agent *switchboard.Agent, d *switchboard.Delivery, answer a2a.Event) error
	AckOfferAt(ctx context.Context, agent *switchboard.Agent, d *switchboard.Delivery, answer a2a.Event, at time.Time) error
	RejectOffer(ctx context.Context, agent *switchboard.Agent, d *switchboard.Delivery, reason string, invalid bool) error
	ApplyAgentEvent(ctx context.Context, agent *switchboard.Agent, id a2a.TaskID, ev a2a.Event) (*switchboard.Task, error)
	ApplyAgentEventAcking(ctx context.Context, agent *switchboard.Agent, id a2a.TaskID, ev a2a.Event, d *switchboard.Delivery, at time.Time) (*switchboard.Task, error)
	AgentTask(ctx context.Context, agent *switchboard.Agent, id a2a.TaskID) (*switchboard.Task, error)
	SendMessage(ctx context.Context, agent *switchboard.Agent, caller switchboard.Peer, req *a2a.SendMessageRequest, proto switchboard.ProtocolVersion) (*switchboard.Task, bool, error)
	// OfferDirectly makes the hub the way new tasks are offered to its
	// connections as they are created; New calls it.
	OfferDirectly(d switchboard.DirectOffers)
}

// Deps are what a Hub needs.
type Deps struct {
	Service Service
	Agents  switchboard.AgentStore
	Tokens  switchboard.TokenStore
	Bus     switchboard.Bus
	Logger  *slog.Logger
	// InstanceID names this process in the holder of the offers it makes.
	InstanceID string
	// URLs computes the deployment's public URLs from each connection's
	// upgrade request: the agent's address that hello names, and the base
	// against which the agent's names of other agents (SendTask,
	// SendMessage, SessionOpen) are read (publicurl.HandleAt). Its zero
	// value takes them from the request's Host.
	URLs publicurl.Resolver
	// Limiter counts an agent's own sends against the peer token it sends
	// with, as the HTTP front door counts that token's calls; optional.
	Limiter switchboard.RateLimiter
	// Sessions runs the live sessions between connected agents
	// (hub/session.go); nil: the session methods are not served.
	Sessions *session.Service
	// Network sends an agent's work to other agents of the network
	// (SendTask, network.go); nil: the method is not served.
	Network Network
	// Cards keeps the cards forwarding connectors publish (PublishCard,
	// card.go); nil: the method is not served.
	Cards switchboard.PublishedCardStore
	// OnAuthenticated, if set, is called with the upgrade request of a
	// connection whose agent token is valid, before it is upgraded (the
	// HTTP listener stops counting it against its address's bound of
	// unauthenticated connections); optional.
	OnAuthenticated func(r *http.Request)
	// Tracer records the offers and the agents' answers as spans of the
	// trace each delivery carries (trace.go); nil: tracing off.
	Tracer *tracing.Tracer
}

// Hub owns the WebSocket connections of connector agents: it authenticates
// them, offers them the work queued for them and records their answers.
//
// Duplicate connections: the newest connection of an agent is its active
// one. When an agent connects again, its older connection is closed with
// connproto.CloseReplaced and the offers it held go back to the queue for the new
// one.
type Hub struct {
	Deps
	cfg Config

	met *hubMetrics // immutable; its counters are atomic

	mu      sync.Mutex
	conns   map[string]*conn // guarded by mu: the active connection of each agent
	closing bool             // guarded by mu: Shutdown has begun
	running sync.WaitGroup   // one per connection being served, and per SendTask of one that waits

	disconnects disconnects // connections that closed, ended in batches (disconnect.go)
	waits       sendWaits   // SendTask calls waiting for their receiver (network.go)

	upkeepStop chan struct{} // guarded by mu: set when the upkeep loop starts (upkeep.go)
	upkeepDone chan struct{} // guarded by mu: closed when it has ended
	upkeepOnce sync.Once     // closes upkeepStop
}

// New returns a Hub, which offers the new tasks of the agents connected
// to it as they are created (Service.OfferDirectly) unless
// cfg.NoDirectOffers.
func New(deps Deps, cfg Config) *Hub {
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if cfg.HelloTimeout <= 0 {
		cfg.HelloTimeout = DefaultHelloTimeout
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = DefaultQueueSize
	}
	if cfg.MaxInflight <= 0 {
		cfg.MaxInflight = DefaultMaxInflight
	}
	if cfg.MaxFrameBytes <= 0 {
		cfg.MaxFrameBytes = DefaultMaxFrameBytes
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.AckTimeout <= 0 {
		cfg.AckTimeout = switchboard.DefaultAckTimeout
	}
	if cfg.MaxSendBytes <= 0 {
		cfg.MaxSendBytes = DefaultMaxSendBytes
	}
	if cfg.HoldWorking <= 0 {
		cfg.HoldWorking = DefaultHoldWorking
	}
	if deps.InstanceID == "" {
		deps.InstanceID = switchboard.NewID()
	}
	h := &Hub{Deps: deps, cfg: cfg, met: newHubMetrics(), conns: make(map[string]*conn)}
	if !cfg.NoDirectOffers {
		deps.Service.OfferDirectly(h)
	}
	return h
}

// sessionTTL is how long an agent's session lasts without a renewal. The
// hub renews the sessions of its connections every heartbeat interval, so a
// session outlives two missed renewals; a connection that stops answering
// pings is closed within two intervals, and a session left by an instance
// that died ends after this.
func (h *Hub) sessionTTL() time.Duration { return 3 * h.cfg.HeartbeatInterval }

// Connected reports whether the agent holds a connection to this instance.
func (h *Hub) Connected(agentID string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.conns[agentID]
	return ok
}

// ServeHTTP authenticates an agent by its agent token, upgrades the request
// to a WebSocket and serves the connection on goroutines of its own: it
// returns once the connection is upgraded, so that the request's goroutine,
// with net/http's deep stack and its buffers, does not live as long as the
// connection. Close waits for the connections.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var (
		agent          *switchboard.Agent
		tokenHash, msg string
		status         int
	)
	onFreshStack(func() { agent, tokenHash, status, msg = h.authenticate(r) })
	if agent == nil {
		if status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Bearer realm="switchboard-connector"`)
		}
		http.Error(w, msg, status)
		return
	}
	if h.OnAuthenticated != nil {
		h.OnAuthenticated(r)
	}
	h.mu.Lock()
	closing := h.closing
	if !closing {
		h.running.Add(1)
	}
	h.mu.Unlock()
	if closing {
		w.Header().Set("Retry-After", "1")
		http.Error(w, "the server is shutting down", http.StatusServiceUnavailable)
		return
	}
	heard := new(connproto.LastHeard)
	sb := &smallBuffers{ResponseWriter: w}
	ws, err := websocket.Accept(sb, r, &websocket.AcceptOptions{Subprotocols: []string{connproto.Subprotocol},
		OnPingReceived: heard.Ping})
	if err != nil {
		h.running.Done()
		h.Logger.Debug("websocket accept", "agent_id", agent.ID, "err", err)
		return
	}
	h.met.connections.Inc()
	ws.SetReadLimit(h.cfg.MaxFrameBytes)
	c := newConn(h, ws, agent, tokenHash, h.URLs.Base(r), heard)
	c.cork = sb.cork
	ctx := context.WithoutCancel(r.Context())
	go func() {
		defer h.running.Done()
		c.serve(ctx)
	}()
}

// authenticate finds the agent whose agent token the request presents. On
// failure it returns the HTTP status and message to answer with.
func (h *Hub) authenticate(r *http.Request) (agent *switchboard.Agent, tokenHash string, status int, msg string) {
	auth := strings.TrimSpace(r.Header.Get("Authorization"))
	scheme, secret, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(secret) == "" {
		return nil, "", http.StatusUnauthorized, "send Authorization: Bearer <agent token>"
	}
	tokenHash = switchboard.HashToken(strings.TrimSpace(secret))
	tok, err := h.Tokens.FindTokenByHash(r.Context(), tokenHash)
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND || (err == nil && tok.Kind != switchboard.TokenAgent) {
		return nil, "", http.StatusUnauthorized, "the agent token is not valid (revoked, rotated or mistyped)"
	} else if err != nil {
		h.Logger.Error("authenticate agent", "err", err)
		return nil, "", http.StatusInternalServerError, "internal error"
	}
	agent, err = h.Agents.FindAgentByID(r.Context(), tok.AgentID)
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND || (err == nil && agent.AccountDisabled) {
		return nil, "", http.StatusForbidden, "the agent no longer exists"
	} else if err != nil {
		h.Logger.Error("authenticate agent", "err", err)
		return nil, "", http.StatusInternalServerError, "internal error"
	}
	if agent.Mode != switchboard.ModeConnector {
		return nil, "", http.StatusConflict, "the agent's mode is " + string(agent.Mode) + ", not connector"
	}
	return agent, tokenHash, 0, ""
}

// register makes c the agent's active connection and returns the one it
// replaces, if any. Once Shutdown has begun it refuses (ok false): a
// connection registered after Shutdown took its list would never be told
// to go.
func (h *Hub) register(c *conn) (old *conn, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closing {
		return nil, false
	}
	old = h.conns[c.agentID]
	h.conns[c.agentID] = c
	h.startUpkeepLocked()
	return old, true
}

// unregister removes c if it is still the agent's active connection.
func (h *Hub) unregister(c *conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conns[c.agentID] == c {
		delete(h.conns, c.agentID)
	}
}

// Shutdown stops accepting connections, tells every connected agent that
// the server is restarting (connproto.CloseRestart: reconnect), and waits
// until every connection has ended or ctx is done. The
// work the connections held goes back to the queue. It is safe to call more
// than once.
func (h *Hub) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	h.closing = true
	conns := make([]*conn, 0, len(h.conns))
	for _, c := range h.conns {
		conns = append(conns, c)
	}
	h.mu.Unlock()

	h.stopUpkeep()
	for _, c := range conns {
		c.close(connproto.CloseRestart, "server restarting") // starts the close handshake; does not wait
	}
	done := make(chan struct{})
	go func() {
		h.running.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return errors.Join(errors.New("hub shutdown: connections still open"), ctx.Err())
	}
}
