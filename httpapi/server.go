package httpapi

import (
	"context"
	"net/http"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/switchboard-dev/switchboard/ownerapi"
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
	// WriteTimeout bounds each write of an answer or a stream event to a
	// client that does not read.
	WriteTimeout = 30 * time.Second
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
	// request whose body the handler does not read has the rest of its
	// body (up to twice MaxBody) read and dropped within that time, is
	// answered with "Connection: close" and its connection closed
	// (body.go).
	BodyTimeout time.Duration
}

// Deps are what the server answers itself, beside its faces' routes.
type Deps struct {
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
}

// Server is the one http.Handler of the HTTP API: it serves the routes
// the faces mount (Mount), health checks, /metrics, and 404 for the rest;
// it bounds request bodies and counts each request.
type Server struct {
	*Env
	Deps
	mux   *http.ServeMux
	table []Endpoint // what mux serves; grows only by Mount, before serving
	// intercept takes the requests it matches before the mux (the gRPC
	// binding, set by Intercept before serving); New's matches none.
	intercept struct {
		match func(*http.Request) bool
		h     http.Handler
	}

	// tlsStatus is Deps.TLS, or noTLS when the server serves no HTTPS.
	tlsStatus  func() map[string]ownerapi.TLSName
	state      atomic.Int32 // stateStarting, stateReady or stateDraining
	storeCheck storeCheck
}

// New returns a Server on env, with its own routes (health, readiness,
// /metrics with a MetricsHandler, 404 for any path no face serves). It
// answers /readyz with 503 until SetReady(true).
func New(env *Env, deps Deps) *Server {
	s := &Server{Env: env, Deps: deps, mux: http.NewServeMux(), tlsStatus: noTLS}
	s.intercept.match = func(*http.Request) bool { return false }
	if deps.TLS != nil {
		s.tlsStatus = deps.TLS
	}
	s.storeCheck.interval = env.Cfg.StoreCheckInterval
	if deps.Pinger != nil {
		s.storeCheck.ping = deps.Pinger.Ping
	}
	s.Mount(Serve("GET", "/healthz", AccessPublic, s.handleHealth), Serve("GET", "/readyz", AccessPublic, s.handleReady))
	if deps.MetricsHandler != nil {
		s.Mount(Serve("GET", "/metrics", AccessPublic, s.handleMetrics))
	}
	s.Mount(Serve("", "/", AccessPublic, s.NotFound))
	return s
}

// Intercept hands the requests match reports true for to h, before the
// mux and uncounted: the A2A edge's gRPC binding, whose requests have
// paths of their own. It is called while the server is assembled.
func (s *Server) Intercept(match func(*http.Request) bool, h http.Handler) {
	s.intercept.match, s.intercept.h = match, h
}

// ServeHTTP implements http.Handler. It counts each request by method and
// status class once the request ends.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.intercept.match(r) {
		s.intercept.h.ServeHTTP(w, r)
		return
	}
	s.Observe(w, r, s.mux)
}

// Access names the credential a route requires.
type Access string

// The kinds of access a route may require. Mount wraps owner and
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
