package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/front"
	"github.com/switchboard-dev/switchboard/mcpauth"
	"github.com/switchboard-dev/switchboard/network"
	"github.com/switchboard-dev/switchboard/outbox"
	"github.com/switchboard-dev/switchboard/outpeer"
	"github.com/switchboard-dev/switchboard/ownerapi"
	"github.com/switchboard-dev/switchboard/pairing"
	"github.com/switchboard-dev/switchboard/peers"
	"github.com/switchboard-dev/switchboard/push"
	"github.com/switchboard-dev/switchboard/reach"
	"github.com/switchboard-dev/switchboard/relay"
	"github.com/switchboard-dev/switchboard/tracing"
	"github.com/switchboard-dev/switchboard/wake"
)

// Defaults for Config fields left at zero.
const (
	DefaultMaxBody           = 1 << 20
	DefaultStreamKeepAlive   = 15 * time.Second
	DefaultStreamMaxDuration = 30 * time.Minute
	DefaultMaxStreamsPerPeer = 10
	// DefaultMaxDomainsPerAccount is how many of an account's agents may
	// hold a domain (Config.MaxDomainsPerAccount).
	DefaultMaxDomainsPerAccount = 10
)

// Limits on slow or idle clients.
const (
	// unauthenticatedBodyLimit bounds what is read of a request that failed
	// authentication, only to echo its JSON-RPC id.
	unauthenticatedBodyLimit = 64 << 10
	// writeTimeout bounds each write of an answer or a stream event to a
	// client that does not read.
	writeTimeout = 30 * time.Second
)

// Config holds the settings of the HTTP API. Zero values mean defaults.
type Config struct {
	// PublicURL is the base URL of the deployment as the world reaches it
	// (scheme and host, optionally a path). Empty: derived from each request.
	PublicURL string
	// TrustForwarded makes request-derived URLs honour X-Forwarded-Proto and
	// X-Forwarded-Host, for deployments behind a proxy that sets them.
	TrustForwarded bool
	// TrustedProxies are the ranges of the proxies in front of the server:
	// a request whose connection comes from one of them counts as the
	// client its X-Forwarded-For names (package clientaddr) in every
	// per-address limit and as a pairing request's requester. None: the
	// connection's peer, whatever the header says.
	TrustedProxies []netip.Prefix
	// MaxBody is the largest request body accepted, in bytes.
	MaxBody int64
	// DefaultAgent is the handle of an agent also served at the root paths.
	DefaultAgent string
	// DeploymentDomains are the deployment's own host names (serve
	// --domain): never an agent's domain, nor, but for the operator's
	// agents, a name under them (docs/agents.md, "Agent domains"). With
	// PublicURL, they are what lets the server tell a request to an agent
	// domain from one to itself: without either, agent domains are not
	// served and cannot be set.
	DeploymentDomains []string
	// MaxDomainsPerAccount bounds the agents of one account that hold a
	// domain, so that no owner spends the deployment's certificate
	// authority limits alone; the operator's account has no bound. 0
	// means DefaultMaxDomainsPerAccount; a negative value lets no account
	// but the operator's give its agents domains.
	MaxDomainsPerAccount int
	// PushNotifications declares on every card that push notifications are
	// sent, and accepts push configurations. It must be true only when a push
	// sender is wired in.
	PushNotifications bool
	// StreamKeepAlive is the interval of SSE keep-alive comments; at each one
	// the stream also checks that the peer's token is still valid.
	StreamKeepAlive time.Duration
	// StreamMaxDuration ends a stream that has lasted this long; clients
	// resume with Last-Event-ID.
	StreamMaxDuration time.Duration
	// MaxStreamsPerPeer bounds the streams one peer may hold open at once.
	MaxStreamsPerPeer int
	// Version is the build version shown by /healthz and /readyz.
	Version string
	// StoreCheckInterval is how long /readyz reuses the outcome of a store
	// check (default DefaultStoreCheckInterval).
	StoreCheckInterval time.Duration
	// BlockingTimeout bounds how long a blocking SendMessage to a live
	// agent waits for the agent's answer before returning the task as it
	// stands.
	BlockingTimeout time.Duration
	// BodyTimeout bounds how long a client may take to send a request's
	// body, from the end of its headers (default DefaultBodyTimeout). A
	// request whose body is not read is answered with "Connection: close"
	// and its connection closed (body.go).
	BodyTimeout time.Duration
}

// Deps are the components the HTTP API needs.
type Deps struct {
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
	Outbox  *outbox.Service
	Limiter switchboard.RateLimiter
	Logger  *slog.Logger
	// Bus carries hints to connections and dispatchers when an agent's
	// settings or tokens change.
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
	// MCP says that agents' MCP endpoints are served (package agenthttp):
	// the MCP token routes are mounted, agents' views name their endpoint.
	MCP bool
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

// Server serves the A2A addresses of every agent, the owner API and health
// checks on one http.Handler.
type Server struct {
	Deps
	env
	usage *peers.Usage // records peer tokens' last use; nil if the token store cannot
	mux   *http.ServeMux
	bind  bindings   // the SDK's HTTP+JSON and gRPC transports; immutable after New
	table []Endpoint // what mux serves; grows only by Mount, before serving
	rpc   map[string]rpcMethod
	met   *serverMetrics

	state      atomic.Int32 // stateStarting, stateReady or stateDraining
	storeCheck storeCheck

	streamsMu     sync.Mutex
	streamsByPeer map[string]int // guarded by streamsMu: open streams per peer key
}

// env holds the Env one level down, so that the Deps' fields of the same
// names are the ones a Server's methods see.
type env struct{ *Env }

// New returns a Server. It answers /readyz with 503 until SetReady(true).
func New(deps Deps, cfg Config) *Server {
	if cfg.BlockingTimeout <= 0 {
		cfg.BlockingTimeout = relay.DefaultBlockingTimeout
	}
	e := NewEnv(EnvDeps{Logger: deps.Logger, Accounts: deps.Accounts, Agents: deps.Agents, Tokens: deps.Tokens, Audit: deps.Audit}, cfg)
	s := &Server{Deps: deps, env: env{e}, mux: http.NewServeMux()}
	cfg = e.Cfg
	if toucher, ok := deps.Tokens.(peers.Toucher); ok {
		s.usage = peers.NewUsage(toucher, deps.Logger, nil)
	}
	s.storeCheck.interval = cfg.StoreCheckInterval
	if deps.Pinger != nil {
		s.storeCheck.ping = deps.Pinger.Ping
	}
	s.streamsByPeer = make(map[string]int)
	s.rpc = s.methods()
	s.met = newServerMetrics(s.rpc)
	s.bind = s.newBindings()
	s.routes()
	return s
}

// ServeHTTP implements http.Handler. It counts each request by method and
// status class once the request ends.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if isGRPC(r) {
		s.serveGRPC(w, r, nil) // the gRPC binding (a2a_grpc.go)
		return
	}
	rec := &statusRecorder{ResponseWriter: w}
	body := watchBody(w, r, s.Cfg.BodyTimeout)
	s.mux.ServeHTTP(rec, r)
	body.finish()
	s.met.countRequest(r.Method, rec.status)
}

// Access names the credential a route requires.
type Access string

// The kinds of access a route may require. routes() wraps owner and
// operator routes in the owner-token check; the handlers of the other
// routes authenticate the request themselves.
const (
	// AccessPublic routes answer anyone.
	AccessPublic Access = "public"
	// AccessPeer routes need a peer token of the agent the path names (of
	// the default agent on root paths), or the agent token of an approved
	// agent that shares a community with it (docs/network.md).
	AccessPeer Access = "peer"
	// AccessOwner routes need the owner token of an enabled account. The
	// agent, task or outbound record the path names must belong to that
	// account, unless it is the operator's; another account's is reported
	// as not found, exactly like a missing one.
	AccessOwner Access = "owner"
	// AccessOperator routes need the operator's owner token.
	AccessOperator Access = "operator"
	// AccessAgent routes need the agent token of an agent of an enabled
	// account (GET /connect: of a connector agent); the token names the
	// agent.
	AccessAgent Access = "agent"
	// AccessOwnerOrAgent routes take an owner token (as AccessOwner) or an
	// agent token (as AccessAgent); each sees what is its own.
	AccessOwnerOrAgent Access = "owner-or-agent"
	// AccessCommunity routes need a peer token of the community the path
	// names, or the agent token of an approved member of it.
	AccessCommunity Access = "community"
	// AccessPush routes need the push token of an outbound record of the
	// agent the path names.
	AccessPush Access = "push"
	// AccessMCP routes need an MCP token of the agent the path names; no
	// other token opens them, and an MCP token opens nothing else.
	AccessMCP Access = "mcp"
)

// Route is one entry of the server's route table.
type Route struct {
	// Method is the HTTP method the route serves (GET also serves HEAD).
	// Empty: any method that no route of the same pattern names.
	Method string
	// Pattern is the http.ServeMux path pattern.
	Pattern string
	// Access is the credential the route requires.
	Access Access
}

// String returns the route as http.ServeMux registers it: "GET /healthz",
// or the bare pattern of a route for any method.
func (r Route) String() string {
	if r.Method == "" {
		return r.Pattern
	}
	return r.Method + " " + r.Pattern
}

// Endpoint is a Route with its handler, as a face hands it to Mount.
// Exactly one of Serve and Owner is set: Owner for owner and operator
// routes, whose handlers run once the owner token is checked; Serve for
// the others, whose handlers authenticate the request themselves.
type Endpoint struct {
	Route
	Serve http.HandlerFunc
	Owner OwnerHandler
}

// Serve returns the endpoint of a route whose handler authenticates the
// request itself.
func Serve(method, pattern string, access Access, h http.HandlerFunc) Endpoint {
	return Endpoint{Route: Route{Method: method, Pattern: pattern, Access: access}, Serve: h}
}

// Owned returns the endpoint of an owner route: h runs once the owner
// token of an enabled account is checked.
func Owned(method, pattern string, h OwnerHandler) Endpoint {
	return Endpoint{Route: Route{Method: method, Pattern: pattern, Access: AccessOwner}, Owner: h}
}

// Operated returns the endpoint of an operator route: h runs once the
// operator's owner token is checked.
func Operated(method, pattern string, h OwnerHandler) Endpoint {
	return Endpoint{Route: Route{Method: method, Pattern: pattern, Access: AccessOperator}, Owner: h}
}

// Routes returns the route table: every method and pattern the server
// serves, with the access each requires. The slice is a copy; the
// authorization matrix (authz_test.go) walks it, so that a route without a
// row there fails that test.
func (s *Server) Routes() []Route {
	out := make([]Route, len(s.table))
	for i, rt := range s.table {
		out[i] = rt.Route
	}
	return out
}

// routeTable returns every route of the server, in registration order.
func (s *Server) routeTable() []Endpoint {
	serve := Serve
	table := []Endpoint{
		serve("GET", "/healthz", AccessPublic, s.handleHealth),
		serve("GET", "/readyz", AccessPublic, s.handleReady),
		serve("GET", "/metrics", AccessPublic, s.handleMetrics),

		// Agent addresses: {base}/a/{handle}, with or without a trailing
		// slash. GET is the public landing page, POST is A2A JSON-RPC for
		// the agent's peers; the same handler answers any other method
		// (OPTIONS preflight, 405).
		serve("GET", "/a/{handle}", AccessPublic, s.handleAddress),
		serve("POST", "/a/{handle}", AccessPeer, s.handleAddress),
		serve("", "/a/{handle}", AccessPublic, s.handleAddress),
		serve("GET", "/a/{handle}/{$}", AccessPublic, s.handleAddress),
		serve("POST", "/a/{handle}/{$}", AccessPeer, s.handleAddress),
		serve("", "/a/{handle}/{$}", AccessPublic, s.handleAddress),
		serve("", "/a/{handle}/.well-known/agent-card.json", AccessPublic, s.handleCardV1),
		serve("", "/a/{handle}/.well-known/agent.json", AccessPublic, s.handleCardV03),
		// The HTTP+JSON binding under the address (a2a_rest.go), any
		// method: the SDK's transport answers one it does not serve.
		serve("", "/a/{handle}/message:send", AccessPeer, s.handleAgentREST),
		serve("", "/a/{handle}/message:stream", AccessPeer, s.handleAgentREST),
		serve("", "/a/{handle}/tasks", AccessPeer, s.handleAgentREST),
		serve("", "/a/{handle}/tasks/{rest...}", AccessPeer, s.handleAgentREST),
		serve("", "/a/{handle}/extendedAgentCard", AccessPeer, s.handleAgentREST),
		serve("", "/a/{handle}/v1/{rest...}", AccessPeer, s.handleAgentREST),

		// The default agent, if any, also lives at the root.
		serve("GET", "/{$}", AccessPublic, s.handleRoot),
		serve("POST", "/{$}", AccessPeer, s.handleRoot),
		serve("", "/{$}", AccessPublic, s.handleRoot),
		serve("", "/.well-known/agent-card.json", AccessPublic, s.handleCardV1),
		serve("", "/.well-known/agent.json", AccessPublic, s.handleCardV03),

		// Community addresses (docs/network.md).
		serve("GET", "/c/{name}", AccessPublic, s.handleCommunityAddress),
		serve("POST", "/c/{name}", AccessCommunity, s.handleCommunityAddress),
		serve("", "/c/{name}", AccessPublic, s.handleCommunityAddress),
		serve("GET", "/c/{name}/{$}", AccessPublic, s.handleCommunityAddress),
		serve("POST", "/c/{name}/{$}", AccessCommunity, s.handleCommunityAddress),
		serve("", "/c/{name}/{$}", AccessPublic, s.handleCommunityAddress),
		serve("", "/c/{name}/.well-known/agent-card.json", AccessPublic, s.handleCommunityCardV1),
		serve("", "/c/{name}/.well-known/agent.json", AccessPublic, s.handleCommunityCardV03),
		serve("", "/c/{name}/message:send", AccessCommunity, s.handleCommunityREST),
		serve("", "/c/{name}/message:stream", AccessCommunity, s.handleCommunityREST),
		serve("", "/c/{name}/tasks", AccessCommunity, s.handleCommunityREST),
		serve("", "/c/{name}/tasks/{rest...}", AccessCommunity, s.handleCommunityREST),
		serve("", "/c/{name}/extendedAgentCard", AccessCommunity, s.handleCommunityREST),
		serve("", "/c/{name}/v1/{rest...}", AccessCommunity, s.handleCommunityREST),
	}
	return append(table, serve("", "/", AccessPublic, s.NotFound))
}

// routes registers the route table on the mux.
func (s *Server) routes() { s.Mount(s.routeTable()...) }

// Mount registers the endpoints of a face, wrapping owner and operator
// routes in the owner-token check. It is called while the server is
// assembled, before it serves; a route whose pattern is already
// registered panics, as http.ServeMux does.
func (s *Server) Mount(eps ...Endpoint) {
	for _, rt := range eps {
		var h http.Handler
		switch {
		case rt.Access == AccessOwner && rt.Owner != nil && rt.Serve == nil:
			h = s.Owner(rt.Owner)
		case rt.Access == AccessOperator && rt.Owner != nil && rt.Serve == nil:
			h = s.Operator(rt.Owner)
		case rt.Access != AccessOwner && rt.Access != AccessOperator && rt.Serve != nil && rt.Owner == nil:
			h = rt.Serve
		default:
			panic("httpapi: route " + rt.String() + ": its handler does not fit access " + string(rt.Access))
		}
		s.mux.Handle(rt.String(), h)
		s.table = append(s.table, rt)
	}
}
