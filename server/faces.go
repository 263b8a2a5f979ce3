package server

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/a2abind"
	"github.com/switchboard-dev/switchboard/a2aedge"
	"github.com/switchboard-dev/switchboard/agenthttp"
	"github.com/switchboard-dev/switchboard/certs"
	"github.com/switchboard-dev/switchboard/clientaddr"
	"github.com/switchboard-dev/switchboard/dashboard"
	"github.com/switchboard-dev/switchboard/front"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/hub"
	"github.com/switchboard-dev/switchboard/mcpauth"
	"github.com/switchboard-dev/switchboard/mcpserver"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/metrics"
	"github.com/switchboard-dev/switchboard/network"
	"github.com/switchboard-dev/switchboard/oauthhttp"
	"github.com/switchboard-dev/switchboard/outbox"
	"github.com/switchboard-dev/switchboard/outpeer"
	"github.com/switchboard-dev/switchboard/ownerapi"
	"github.com/switchboard-dev/switchboard/ownerhttp"
	"github.com/switchboard-dev/switchboard/pairing"
	"github.com/switchboard-dev/switchboard/peers"
	"github.com/switchboard-dev/switchboard/publicurl"
	"github.com/switchboard-dev/switchboard/push"
	"github.com/switchboard-dev/switchboard/ratelimit"
	"github.com/switchboard-dev/switchboard/reach"
	"github.com/switchboard-dev/switchboard/relay"
	"github.com/switchboard-dev/switchboard/tracing"
	"github.com/switchboard-dev/switchboard/wake"
)

// buildFaces makes what answers the world, on the services: the hub of
// connector agents, the HTTP API (addresses, owner API, network API, MCP),
// the console with its device and consent pages. Each names addresses
// through one publicurl.Resolver.
func (s *Server) buildFaces() error {
	cfg, db := s.Config, s.DB
	urls := publicurl.Resolver{PublicURL: strings.TrimRight(cfg.PublicURL, "/"), TrustForwarded: cfg.TrustForwarded, Agents: db,
		Domains: cfg.ACME.Domains}
	s.reach = reach.New(reach.Config{PublicURL: urls.PublicURL, Domains: cfg.ACME.Domains, Resolver: certs.NewResolver(cfg.ACME.DNSResolver),
		Roots: cfg.ReachRoots, Guard: guard(cfg), Port: cfg.ReachPort})
	s.Hub = hub.New(hub.Deps{
		Service: s.Tasks, Agents: db, Tokens: db, Bus: s.Bus, Logger: s.Logger, InstanceID: s.instanceID,
		Limiter: s.limiter, OnAuthenticated: httpapi.MarkAuthenticated, Network: s.Network, Sessions: s.Sessions, Cards: s.published,
		URLs: urls, Tracer: s.Tracer,
	}, hub.Config{HeartbeatInterval: cfg.Heartbeat, AckTimeout: s.Tasks.AckTimeout, MaxSendBytes: int(cfg.MaxBody), Poll: cfg.HubPoll})
	var metricsHandler http.Handler // /metrics on the main listener only when asked
	if cfg.Metrics {
		metricsHandler = s.metrics.reg
	}
	s.API = NewAPI(APIDeps{
		Accounts: db, Agents: db, Tokens: db, Deliveries: db, Tasks: s.Tasks, Outbox: s.Outbox, Limiter: s.limiter,
		Tracer: s.Tracer, Logger: s.Logger, Bus: s.Bus, Connect: s.Hub, Presence: s.Tasks, Pinger: db, MetricsHandler: metricsHandler,
		Wakes: s.Wakes, Pushes: s.Pushes, Network: s.Network, Pairing: s.Pairing, MCP: s.newMCP(),
		Fronts: s.Fronts, OAuth: s.OAuth, Published: s.published, OutboundPeers: s.OutboundPeers,
		TLS: s.tlsStatusFunc(), Reach: s.reach, Audit: s.Audit, AuditEntries: db,
	}, httpapi.Config{
		PublicURL: urls.PublicURL, TrustForwarded: cfg.TrustForwarded, MaxBody: cfg.MaxBody,
		DefaultAgent: cfg.DefaultAgent, Version: cfg.Version, BlockingTimeout: cfg.BlockingTimeout,
		PushNotifications: true, BodyTimeout: cfg.BodyTimeout, TrustedProxies: cfg.TrustedProxies,
		DeploymentDomains: urls.Domains, MaxDomainsPerAccount: cfg.MaxDomainsPerAccount,
	})
	var err error
	if s.Console, err = s.newConsole(urls); err != nil {
		return err
	}
	if s.Device, err = dashboard.NewDevicePage(s.Console, s.Pairing, cfg.DefaultAgent); err != nil {
		return err
	}
	if s.OAuth != nil {
		if s.Consent, err = dashboard.NewConsentPage(s.Console, s.OAuth); err != nil {
			return err
		}
	}
	s.metrics.reg.MustRegister(s.API.Metrics()...)
	s.metrics.reg.MustRegister(s.Hub.Metrics()...)
	(&storeGauges{db: db, log: s.Logger}).register(s.metrics.reg)
	return nil
}

// APIDeps are the stores and services the HTTP API serves. An optional
// service left nil leaves the routes that serve it unmounted (they answer
// 404 like any unknown path), unless the doc says otherwise.
type APIDeps struct {
	// Tracer records a span for each A2A call, continuing the peer's
	// traceparent (a2a.go); nil: tracing off.
	Tracer     *tracing.Tracer
	Accounts   switchboard.AccountStore
	Agents     switchboard.AgentStore
	Tokens     switchboard.TokenStore
	Deliveries switchboard.DeliveryStore
	Tasks      *relay.Service
	// Outbox records what agents send to other agents and receives the
	// pushes that answer them; nil: the outbox, history and push routes
	// answer 404.
	Outbox *outbox.Service
	// Limiter counts the requests of each peer (and the pushes each agent
	// receives from each address); nil: none is limited.
	Limiter switchboard.RateLimiter
	Logger  *slog.Logger
	// Connect serves connector agents' WebSocket connections at /connect;
	// nil: not served.
	Connect http.Handler
	// Bus carries hints to connections and dispatchers when an agent's
	// settings or tokens change; nil: a bus of this API alone, in the
	// process (membus).
	Bus switchboard.Bus
	// Presence tells whether an agent holds a connection to any instance,
	// and since when; optional.
	Presence interface {
		AgentConnectedSince(ctx context.Context, agentID string) (since time.Time, connected bool, err error)
	}
	// Pinger is the store as /readyz checks it: Ping reports whether it
	// answers. Optional: without it /readyz checks nothing more than the
	// server's own state.
	Pinger interface {
		Ping(ctx context.Context) error
	}
	// TLS returns the state of each name's certificate, for /readyz's
	// tls field; nil: the server serves no HTTPS.
	TLS func() map[string]ownerapi.TLSName
	// MetricsHandler serves GET /metrics; nil: not served here (metrics
	// may be on a listener of their own, or off).
	MetricsHandler http.Handler
	// Wakes manages agents' wake webhooks (/agents/{ref}/wake); nil: not
	// served.
	Wakes *wake.Service
	// Pushes shows what became of the push notifications of a task
	// (/tasks/{id}/pushes); nil: that route answers 404.
	Pushes *push.Service
	// MCP serves agents' MCP endpoints ({address}/mcp) and enables the
	// MCP token routes; nil: none of them is served (404).
	MCP agenthttp.MCPHandler
	// OAuth lets MCP clients get MCP tokens by OAuth 2.1 (registration,
	// consent, the code and refresh grants); nil, or MCP nil: not served.
	OAuth *mcpauth.Service
	// Network holds communities, approval, discovery and the directory;
	// nil: the network's routes answer 404 and agent tokens open no
	// agent's address.
	Network *network.Service
	// Pairing runs the device authorization grant (docs/pairing.md); nil:
	// the pairing routes answer 404 and cards declare no pairing scheme.
	Pairing *pairing.Service
	// Fronts forwards the work of agents in front mode to their upstreams
	// (docs/front.md); nil: agents cannot be created in front mode.
	Fronts *front.Service
	// Published serves the cards forwarding connectors publish for their
	// connector agents' addresses; nil: those addresses serve the card of
	// the agent's settings.
	Published *front.Published
	// OutboundPeers keeps agents' synced aliases (/agents/{ref}/peers,
	// docs/mcp.md); nil: those routes answer 404.
	OutboundPeers *outpeer.Service
	// Reach checks how the world reaches agents' public addresses
	// (/agents/{ref}/reachability); nil: none is checked.
	Reach *reach.Checker
	// Audit records the security-relevant changes made through the API
	// (docs/operating.md, "Audit log"); nil: nothing is recorded.
	Audit switchboard.AuditLog
	// AuditEntries is the audit log GET /audit reads; nil: that route
	// answers 404.
	AuditEntries switchboard.AuditStore
}

// API is the HTTP API: the server that answers every request
// (httpapi.Server) with the faces mounted on it, the A2A edge, whose
// metrics it reports, and the edge's bindings, which also serve the
// agents' domains in front of everything (AgentDomains).
type API struct {
	*httpapi.Server
	Edge     *a2aedge.Edge
	Bindings *a2abind.Face
}

// NewAPI returns the HTTP API on deps: every face, each built with the
// services it serves and mounted on one httpapi.Server. An optional
// service that is nil leaves its routes unmounted. The tests of the faces
// and of the packages that run a whole API (hub, connector, mcpserver)
// assemble it here too.
func NewAPI(deps APIDeps, cfg httpapi.Config) *API {
	if deps.Limiter == nil {
		deps.Limiter = ratelimit.NewMemory(0, time.Minute) // allows everything
	}
	if deps.Bus == nil {
		deps.Bus = membus.New()
	}
	env := httpapi.NewEnv(httpapi.EnvDeps{Logger: deps.Logger, Accounts: deps.Accounts, Agents: deps.Agents, Tokens: deps.Tokens,
		Audit: deps.Audit}, cfg)
	api := httpapi.New(env, httpapi.Deps{Pinger: deps.Pinger, TLS: deps.TLS, MetricsHandler: deps.MetricsHandler})
	edge := a2aedge.New(env, a2aedge.Deps{Tasks: deps.Tasks, Tracer: deps.Tracer, Limiter: deps.Limiter, Bus: deps.Bus,
		Network: deps.Network, Pairing: deps.Pairing != nil, Fronts: deps.Fronts, Published: deps.Published})
	bind := a2abind.New(edge)
	api.Intercept(a2abind.IsGRPC, http.HandlerFunc(bind.ServeGRPC))
	api.Mount(edge.Routes()...)
	api.Mount(bind.Routes()...)
	api.Mount(ownerhttp.New(env, ownerhttp.Deps{Deliveries: deps.Deliveries, Tasks: deps.Tasks, Bus: deps.Bus,
		PublicCard: edge.PublicCard, Presence: deps.Presence, Outbox: deps.Outbox, Wakes: deps.Wakes, Pushes: deps.Pushes,
		MCP: deps.MCP != nil, OAuth: deps.OAuth, Network: deps.Network, Pairing: deps.Pairing, Fronts: deps.Fronts,
		Published: deps.Published, OutboundPeers: deps.OutboundPeers, Reach: deps.Reach, AuditEntries: deps.AuditEntries,
	}).Routes()...)
	var oauth *mcpauth.Service // MCP clients' OAuth, only with MCP on
	if deps.MCP != nil {
		oauth = deps.OAuth
	}
	api.Mount(oauthhttp.New(env, deps.Pairing, oauth).Routes()...)
	api.Mount(agenthttp.New(env, agenthttp.Deps{Tasks: deps.Tasks, Limiter: deps.Limiter, Connect: deps.Connect,
		Network: deps.Network, Outbox: deps.Outbox, MCP: deps.MCP}).Routes()...)
	return &API{Server: api, Edge: edge, Bindings: bind}
}

// AgentDomains serves requests to agents' domains as their addresses
// (a2abind.Face.AgentDomains) and hands every other to next.
func (a *API) AgentDomains(next http.Handler) http.Handler { return a.Bindings.AgentDomains(next) }

// Metrics returns the metrics the API keeps: the server's request
// counter, the edge's JSON-RPC counters and stream gauge.
func (a *API) Metrics() []metrics.Metric { return append(a.Server.Metrics(), a.Edge.Metrics()...) }

// newMCP returns the MCP endpoints' handler, or nil when the
// configuration turns MCP off (then no MCP route is served).
func (s *Server) newMCP() agenthttp.MCPHandler {
	if s.Config.MCPOff {
		return nil
	}
	db := s.DB
	return mcpserver.New(mcpserver.Deps{
		Accounts: db, Agents: db, Tokens: db, Tasks: s.Tasks, Outbox: s.Outbox, Network: s.Network, Pairing: s.Pairing, Limiter: s.limiter,
		OutboundPeers: s.OutboundPeers,
		Logger:        s.Logger.With("face", "mcp"), OnAuthenticated: httpapi.MarkAuthenticated,
		Audit: s.Audit, ClientAddr: clientaddr.New(s.Config.TrustedProxies).Addr,
	}, mcpserver.Config{Version: s.Config.Version, MaxBody: s.Config.MaxBody, OAuth: true})
}

// newConsole returns the web console on the services the owner API uses.
// Sign-in attempts are counted per client address (newLimiter).
func (s *Server) newConsole(urls publicurl.Resolver) (*dashboard.Console, error) {
	db := s.DB
	return dashboard.New(dashboard.Deps{
		Accounts: db, Agents: db, Tokens: db, SignIns: db, Glances: db, Health: db,
		Tasks: s.Tasks, Peers: peers.New(db, s.Bus, s.Logger), Network: s.Network, Wakes: s.Wakes, Pushes: s.Pushes, Outbox: s.Outbox,
		OutboundPeers: s.OutboundPeers, Published: s.published, Reach: s.reach, Bus: s.Bus, Audit: s.Audit, AuditEntries: db,
		Limiter: s.newLimiter(dashboard.DefaultSignInsPerMinute, time.Minute), Logger: s.Logger,
		BaseURL: urls.Base, OnAuthenticated: httpapi.MarkAuthenticated,
	}, dashboard.Config{TrustedProxies: s.Config.TrustedProxies})
}

// handler serves /dashboard and the paths under it with the console, the
// /device pages of the addresses with the device page and the MCP clients'
// authorization endpoints with the consent page, if MCP is on (they share
// the console's sign-in), everything else with the API; the API bounds the
// reading of the pages' request bodies as of its own. A request to an
// agent domain is the API's first (API.AgentDomains): it is
// served as the agent's address, or sent to the deployment's host to
// sign in, never to the console as it came.
func (s *Server) handler() http.Handler {
	api := s.API
	console, device := api.WatchBodies(s.Console), api.WatchBodies(s.Device)
	var consent http.Handler
	if s.Consent != nil {
		consent = api.WatchBodies(s.Consent)
	}
	return api.AgentDomains(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; p == "/dashboard" || strings.HasPrefix(p, "/dashboard/") {
			console.ServeHTTP(w, r)
			return
		}
		if dashboard.IsDevicePath(r.URL.Path) {
			device.ServeHTTP(w, r)
			return
		}
		if consent != nil && dashboard.IsAuthorizePath(r.URL.Path) {
			consent.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	}))
}
