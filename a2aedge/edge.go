package a2aedge

import (
	"context"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/front"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/network"
	"github.com/switchboard-dev/switchboard/pairing"
	"github.com/switchboard-dev/switchboard/peers"
	"github.com/switchboard-dev/switchboard/relay"
	"github.com/switchboard-dev/switchboard/tracing"
)

// Deps are the services the edge calls.
type Deps struct {
	Tasks *relay.Service
	// Tracer records a span for each A2A call, continuing the peer's
	// traceparent (a2a.go); nil: tracing off.
	Tracer  *tracing.Tracer
	Limiter switchboard.RateLimiter
	// Bus tells streams that a peer's credential may have been revoked;
	// required.
	Bus switchboard.Bus
	// Network routes a community address's calls and lets approved
	// agents call each other with their agent tokens; nil: no community
	// address is served and agent tokens open no address.
	Network *network.Service
	// Pairing says that the server runs pairing: cards, landing pages and
	// 401s name the pairing endpoints of agents that take pairing
	// requests (pairing.Enabled); false: none does.
	Pairing bool
	// Fronts: the cards of front agents are their upstreams', rewritten;
	// nil: no agent is a front.
	Fronts *front.Service
	// Published: the cards connectors publish for their agents; nil:
	// those addresses serve the card of the agent's settings.
	Published *front.Published
}

// Edge serves the A2A addresses. What its optional services answer is
// decided once, in New: the handlers ask the fields below, each the
// service or what a server without it does (services.go).
type Edge struct {
	*httpapi.Env
	Deps
	// usage records peer tokens' last use.
	usage tokenUse
	// takesPairing says whether the agent takes pairing requests.
	takesPairing func(agent *switchboard.Agent) bool
	// agentCaller is the caller an agent token names at t.
	agentCaller func(ctx context.Context, tok *switchboard.Token, hash string, t rpcTarget) (rpcCaller, error)
	// communities finds a community by name.
	communities func(ctx context.Context, name string) (*switchboard.Community, error)
	published   publishedCards
	fronts      frontCards
	blocking    time.Duration
	rpc         map[string]rpcMethod
	met         *edgeMetrics

	streamsMu     sync.Mutex
	streamsByPeer map[string]int // guarded by streamsMu: open streams per peer key
}

// New returns the edge. A blocking SendMessage waits for the agent's
// answer Config.BlockingTimeout at most (relay.DefaultBlockingTimeout
// when 0).
func New(env *httpapi.Env, deps Deps) *Edge {
	s := &Edge{Env: env, Deps: deps, blocking: env.Cfg.BlockingTimeout, streamsByPeer: make(map[string]int)}
	if s.blocking <= 0 {
		s.blocking = relay.DefaultBlockingTimeout
	}
	s.usage, s.takesPairing, s.agentCaller, s.communities = noTokenUse{}, takesNoPairing, refuseAgentTokens, noCommunity
	s.published, s.fronts = noPublished{}, noFronts{}
	if toucher, ok := env.Tokens.(peers.Toucher); ok {
		s.usage = peers.NewUsage(toucher, env.Logger, nil)
	}
	if deps.Pairing {
		s.takesPairing = pairing.Enabled
	}
	if deps.Network != nil {
		s.agentCaller, s.communities = s.networkAgentCaller, deps.Network.LookupCommunity
	}
	if deps.Published != nil {
		s.published = deps.Published
	}
	if deps.Fronts != nil {
		s.fronts = deps.Fronts
	}
	s.rpc = s.methods()
	s.met = newEdgeMetrics(s.rpc)
	return s
}

// Routes returns the edge's endpoints: agents' addresses with their
// cards, the default agent's at the root, and, with the network,
// community addresses.
func (s *Edge) Routes() []httpapi.Endpoint {
	serve, public, peer := httpapi.Serve, httpapi.AccessPublic, httpapi.AccessPeer
	table := []httpapi.Endpoint{
		// Agent addresses: {base}/a/{handle}, with or without a trailing
		// slash. GET is the public landing page, POST is A2A JSON-RPC for
		// the agent's peers; the same handler answers any other method
		// (OPTIONS preflight, 405).
		serve("GET", "/a/{handle}", public, s.handleAddress),
		serve("POST", "/a/{handle}", peer, s.handleAddress),
		serve("", "/a/{handle}", public, s.handleAddress),
		serve("GET", "/a/{handle}/{$}", public, s.handleAddress),
		serve("POST", "/a/{handle}/{$}", peer, s.handleAddress),
		serve("", "/a/{handle}/{$}", public, s.handleAddress),
		serve("", "/a/{handle}/.well-known/agent-card.json", public, s.handleCardV1),
		serve("", "/a/{handle}/.well-known/agent.json", public, s.handleCardV03),

		// The default agent, if any, also lives at the root.
		serve("GET", "/{$}", public, s.handleRoot),
		serve("POST", "/{$}", peer, s.handleRoot),
		serve("", "/{$}", public, s.handleRoot),
		serve("", "/.well-known/agent-card.json", public, s.handleCardV1),
		serve("", "/.well-known/agent.json", public, s.handleCardV03),
	}
	if s.Network == nil {
		return table
	}
	// Community addresses (docs/network.md).
	community := httpapi.AccessCommunity
	return append(table,
		serve("GET", "/c/{name}", public, s.handleCommunityAddress),
		serve("POST", "/c/{name}", community, s.handleCommunityAddress),
		serve("", "/c/{name}", public, s.handleCommunityAddress),
		serve("GET", "/c/{name}/{$}", public, s.handleCommunityAddress),
		serve("POST", "/c/{name}/{$}", community, s.handleCommunityAddress),
		serve("", "/c/{name}/{$}", public, s.handleCommunityAddress),
		serve("", "/c/{name}/.well-known/agent-card.json", public, s.handleCommunityCardV1),
		serve("", "/c/{name}/.well-known/agent.json", public, s.handleCommunityCardV03),
	)
}
