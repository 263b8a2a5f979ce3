package server

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/front"
	"github.com/switchboard-dev/switchboard/hub"
	"github.com/switchboard-dev/switchboard/mcpauth"
	"github.com/switchboard-dev/switchboard/metrics"
	"github.com/switchboard-dev/switchboard/netguard"
	"github.com/switchboard-dev/switchboard/network"
	"github.com/switchboard-dev/switchboard/outbox"
	"github.com/switchboard-dev/switchboard/outpeer"
	"github.com/switchboard-dev/switchboard/pairing"
	"github.com/switchboard-dev/switchboard/peers"
	"github.com/switchboard-dev/switchboard/publicurl"
	"github.com/switchboard-dev/switchboard/push"
	"github.com/switchboard-dev/switchboard/ratelimit"
	"github.com/switchboard-dev/switchboard/relay"
	"github.com/switchboard-dev/switchboard/session"
	"github.com/switchboard-dev/switchboard/sqlstore"
	"github.com/switchboard-dev/switchboard/wake"
)

// buildServices makes the services every face calls, each from what it
// needs: the task relay, the outbox, the network, pushes, wakes, live
// sessions, pairing, OAuth, fronts and synced aliases.
func (s *Server) buildServices(ctx context.Context, carrier switchboard.Carrier) error {
	cfg, db := s.Config, s.DB
	if cfg.DefaultAgent != "" {
		h, err := switchboard.NormalizeHandle(cfg.DefaultAgent)
		if err != nil {
			return fmt.Errorf("default agent: %w", err)
		}
		s.Config.DefaultAgent = h
	}
	if cfg.AllowPrivateNetworks {
		s.Logger.Warn("OUTBOUND REQUESTS MAY REACH PRIVATE NETWORKS (--allow-private-networks): webhooks, push notifications and wakes can target loopback, LAN and metadata addresses")
	}
	if err := s.openAudit(ctx, db); err != nil {
		return err
	}
	s.Tasks = newRelay(cfg, db, s.Bus, s.Logger, s.instanceID, s.metrics.onAck)
	s.Tasks.Tracer = s.Tracer
	s.Outbox = newOutbox(db, s.Bus)
	s.Network = newNetwork(cfg, db, s.Tasks)
	s.Pushes = s.newPushes(db)
	s.Wakes = s.newWakes(db)
	s.limiter = s.newLimiter(cfg.RatePerMinute, time.Minute)
	if shared, ok := s.limiter.(*ratelimit.Shared); ok {
		s.metrics.reg.MustRegister(metrics.NewCounterFunc("switchboard_rate_limit_failures_total",
			"Requests let through because the shared rate limit could not be counted (fail open).",
			func() float64 { return float64(shared.Failures()) }))
	}
	sessions, err := newSessions(ctx, cfg, carrier, db, s.Network, s.Logger, s.instanceID)
	if err != nil {
		return err
	}
	s.Sessions = sessions
	s.metrics.registerSessions(sessions)
	s.Pairing = s.newPairing(db)
	if !cfg.MCPOff {
		s.OAuth = s.newOAuth(db)
	}
	clients := frontClientOptions(cfg)
	s.Fronts = front.NewService(db, s.Tasks, clients, cfg.FrontTimeout, s.Logger)
	s.OutboundPeers = outpeer.New(db, clients)
	s.published = &front.Published{Store: db, Logger: s.Logger.With("face", "published-cards")}
	return nil
}

// guard is the network guard of every outbound request: private networks
// only where the operator opened them.
func guard(cfg Config) netguard.Options {
	return netguard.Options{AllowPrivate: cfg.AllowPrivateNetworks, Allow: cfg.OutboundAllow}
}

// newRelay returns the task relay with the configured deadlines and
// per-peer quotas (a zero Config field keeps the relay's default; a
// negative one is no bound).
func newRelay(cfg Config, db *sqlstore.DB, bus switchboard.Bus, log *slog.Logger, instanceID string,
	onAck func(switchboard.DeliveryMode, *switchboard.Delivery, time.Time)) *relay.Service {
	t := relay.New(db, bus, log)
	t.InstanceID = instanceID
	t.OnAck = onAck
	if cfg.MaxOpenTasks != 0 {
		t.MaxOpenTasksPerPeer = max(cfg.MaxOpenTasks, 0)
	}
	if cfg.MaxPeerBytes != 0 {
		t.MaxPeerBytes = max(cfg.MaxPeerBytes, 0)
	}
	if cfg.DeliveryDeadline > 0 {
		t.DeliveryDeadline = cfg.DeliveryDeadline
	}
	if cfg.EarlyWriteAfter > 0 {
		t.EarlyWriteAfter = cfg.EarlyWriteAfter
	}
	// A lone instance (SQLite and the in-process bus) sends a connector
	// agent's new task before writing it, as it does a front's.
	t.WriteOnAnswer = !IsPostgres(cfg.Database) && busName(cfg.Bus) == "memory"
	return t
}

// newOutbox returns the outbox; a push it records wakes the sending agent
// (an outbound_update wake, queued in the push's transaction) and hints the
// wake senders on bus.
func newOutbox(db *sqlstore.DB, bus switchboard.Bus) *outbox.Service {
	o := outbox.New(db, db)
	o.Bus = bus
	return o
}

// newNetwork returns the network service of the configuration: approval,
// the liveness window of the hub's heartbeat, the reconnect grace.
func newNetwork(cfg Config, db *sqlstore.DB, tasks *relay.Service) *network.Service {
	n := network.New(db, tasks)
	n.RequireApproval = cfg.RequireApproval
	n.HeartbeatInterval = hub.DefaultHeartbeatInterval
	if cfg.Heartbeat > 0 {
		n.HeartbeatInterval = cfg.Heartbeat
	}
	switch {
	case cfg.ReconnectGrace > 0:
		n.ReconnectGrace = cfg.ReconnectGrace
	case cfg.ReconnectGrace < 0:
		n.ReconnectGrace = 0
	}
	return n
}

// newPushes returns the push notification sender: pushes go through the
// network guard, each attempt counted in switchboard_push_attempts_total.
func (s *Server) newPushes(db *sqlstore.DB) *push.Service {
	cfg := s.Config
	sender := push.New(netguard.Options{AllowPrivate: cfg.AllowPrivateNetworks, Allow: cfg.OutboundAllow, Timeout: cfg.Push.Timeout},
		"switchboard/"+cfg.Version)
	p := push.NewService(db, s.Bus, sender, s.Logger)
	p.InstanceID = s.instanceID
	return p
}

// newWakes returns the wake sender: wakes go through the network guard,
// over https unless the guard was opened, and name the agent's card at
// the public URL, or at the listener's when none is set.
func (s *Server) newWakes(db *sqlstore.DB) *wake.Service {
	g := guard(s.Config)
	sender := wake.New(g)
	sender.UserAgent = "switchboard/" + s.Config.Version
	sender.CardURL = func(a *switchboard.Agent) string {
		base := strings.TrimRight(s.Config.PublicURL, "/")
		if base == "" {
			base = s.URL()
		}
		return publicurl.AddressAt(base, a) + "/.well-known/agent-card.json"
	}
	w := wake.NewService(db, db, s.Bus, sender, s.Logger)
	w.InstanceID = s.instanceID
	w.CheckTemplate = wake.CheckTemplate
	w.AllowHTTP = g.AllowsPlainHTTP() // plain http only where the operator opened the guard
	s.metrics.registerWakes(w)
	return w
}

// newLimiter returns a rate limit of n per window: counted in the shared
// database on PostgreSQL, so that a limit holds once across instances; in
// memory otherwise.
func (s *Server) newLimiter(n int, window time.Duration) switchboard.RateLimiter {
	if IsPostgres(s.Config.Database) {
		shared := ratelimit.NewShared(s.DB, n, window)
		shared.Log = s.Logger
		return shared
	}
	return ratelimit.NewMemory(n, window)
}

// newSessions starts the live sessions between connected agents on the
// bus's carrier, under the network's rule (sessionPolicy).
func newSessions(ctx context.Context, cfg Config, carrier switchboard.Carrier, db *sqlstore.DB, net *network.Service,
	log *slog.Logger, instanceID string) (*session.Service, error) {
	scfg := session.Config{}
	switch {
	case cfg.ReconnectGrace > 0:
		scfg.Grace = cfg.ReconnectGrace
	case cfg.ReconnectGrace < 0: // --reconnect-grace 0: a session ends as its agent's socket drops
		scfg.Grace = time.Millisecond
	}
	sessions := session.New(session.Deps{Carrier: carrier, Agents: db, Policy: sessionPolicy{net},
		Logger: log, InstanceID: instanceID}, scfg)
	if err := sessions.Start(ctx); err != nil {
		return nil, fmt.Errorf("start live sessions: %w", err)
	}
	return sessions, nil
}

// sessionPolicy is the network's rule for live sessions: two agents may
// hold one when both take part in the network (approved) and they share
// a community.
type sessionPolicy struct{ net *network.Service }

// MaySession implements session.Policy.
func (p sessionPolicy) MaySession(ctx context.Context, from, to *switchboard.Agent) (bool, error) {
	if !from.Approved || !to.Approved {
		return false, nil
	}
	return p.net.ShareCommunity(ctx, from.ID, to.ID)
}

// newPairing returns the pairing service (docs/pairing.md). Token polls
// are counted per client address (newLimiter); the OAuth token and
// revocation requests of MCP clients share that count. Requests for codes
// are counted in the store (pairing_counts), each address within its own
// share (pairing.Config's defaults). Each new request wakes the agent (a
// pairing_request wake), if it has a wake configuration.
func (s *Server) newPairing(db *sqlstore.DB) *pairing.Service {
	return pairing.New(pairing.Deps{Store: db, Tokens: db, Peers: peers.New(db, s.Bus, s.Logger),
		Polls: s.newLimiter(pairing.DefaultPollsPerMinute, time.Minute),
		OnRequest: func(ctx context.Context, _ *switchboard.Agent, p *switchboard.Pairing) error {
			_, err := s.Wakes.Enqueue(ctx, pairing.WakeRequest(p)) // agents without a wake configuration get none
			return err
		},
		Logger: s.Logger}, pairing.Config{Interval: s.Config.PairingInterval})
}

// newOAuth returns the OAuth service of MCP clients. Clients whose
// client_id is the URL of their metadata document are fetched through the
// network guard, counted per address (newLimiter).
func (s *Server) newOAuth(db *sqlstore.DB) *mcpauth.Service {
	logger := s.Logger.With("face", "mcp-oauth")
	docs := mcpauth.NewDocuments(mcpauth.DocumentOptions{
		Guard: guard(s.Config), RootCAs: s.Config.ClientMetadataRootCAs,
		Limiter: s.newLimiter(mcpauth.DocumentFetchesPerHour, time.Hour), Logger: logger,
	})
	return mcpauth.New(mcpauth.Deps{Store: db, Tokens: db, Documents: docs, Logger: logger}, mcpauth.Config{})
}

// frontClientOptions are the options of the clients of fronts' upstreams
// and of synced aliases: the network guard and the roots they trust.
func frontClientOptions(cfg Config) front.ClientOptions {
	return front.ClientOptions{Guard: guard(cfg), RootCAs: cfg.FrontRootCAs}
}
