package ownerhttp

import (
	"context"
	"net/http"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/accounts"
	"github.com/switchboard-dev/switchboard/front"
	"github.com/switchboard-dev/switchboard/httpapi"
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
	"github.com/switchboard-dev/switchboard/wake"
)

// Deps are the services the owner API serves. An optional one left nil
// leaves its routes unmounted (they answer 404 like any unknown path),
// unless its doc says otherwise.
type Deps struct {
	Deliveries switchboard.DeliveryStore
	Tasks      *relay.Service
	// Bus carries hints to connections and dispatchers when an agent's
	// settings or tokens change.
	Bus switchboard.Bus
	// PublicCard returns the 1.0 card of an agent as its peers get it
	// (the A2A edge's), for the leak check of GET /agents/{ref}/front.
	PublicCard func(agent *switchboard.Agent, addr, issuer string, up *front.Card) any
	// Presence tells whether an agent holds a connection to any instance,
	// and since when; optional (agents' views say nothing of it).
	Presence interface {
		AgentConnectedSince(ctx context.Context, agentID string) (since time.Time, connected bool, err error)
	}
	// Outbox: the outbox and history routes.
	Outbox *outbox.Service
	// Wakes: the wake routes.
	Wakes *wake.Service
	// Pushes: GET /tasks/{id}/pushes.
	Pushes *push.Service
	// MCP says that agents' MCP endpoints are served: the MCP token
	// routes are mounted, and agents' views name their endpoint.
	MCP bool
	// OAuth: MCP clients' grants, listed and ended with their MCP tokens;
	// nil: there are none.
	OAuth *mcpauth.Service
	// Network: approval, communities and community tokens; nil: agents
	// start approved.
	Network *network.Service
	// Pairing: approving and denying pairing requests; nil: an agent's
	// list of pending pairings is empty.
	Pairing *pairing.Service
	// Fronts: agents in front mode; nil: none can be made.
	Fronts *front.Service
	// Published: the cards connectors publish, in agents' views; optional.
	Published *front.Published
	// OutboundPeers: the synced aliases' routes.
	OutboundPeers *outpeer.Service
	// Reach: checks of how the world reaches agents; nil: none is checked.
	Reach *reach.Checker
	// AuditEntries: GET /audit.
	AuditEntries switchboard.AuditStore
}

// Face serves the owner API. The handlers mounted with or without an
// optional service ask the fields below, decided once in New: each the
// service, or what a server without it answers (services.go).
type Face struct {
	*httpapi.Env
	Deps
	peers  *peers.Service    // issues and revokes peer tokens
	owners *accounts.Service // accounts, owner and agent tokens, agent deletion

	members   membership
	fronts    frontMode
	published publishedCards
	grants    oauthGrants
	reach     reachChecks
	pairings  pendingPairings
	// connection adds to a connector agent's view whether it holds a
	// connection.
	connection func(r *http.Request, g *switchboard.Agent, v *ownerapi.Agent)
}

// New returns the owner API.
func New(env *httpapi.Env, deps Deps) *Face {
	s := &Face{Env: env, Deps: deps, peers: peers.New(env.Tokens, deps.Bus, env.Logger),
		owners:  accounts.New(env.Accounts, env.Agents, env.Tokens, deps.Bus, env.Logger),
		members: noNetwork{}, fronts: frontsOff{}, published: noPublished{}, grants: noGrants{}, reach: noReach{},
		pairings: noPairings{}, connection: noConnection}
	if deps.Network != nil {
		s.members = deps.Network
	}
	if deps.Fronts != nil {
		s.fronts = frontsOn{deps.Fronts}
	}
	if deps.Published != nil {
		s.published = deps.Published
	}
	if deps.OAuth != nil {
		s.grants = deps.OAuth
	}
	if deps.Reach != nil {
		s.reach = deps.Reach
	}
	if deps.Pairing != nil {
		s.pairings = deps.Pairing
	}
	if deps.Presence != nil {
		s.connection = s.viewConnection
	}
	return s
}

// Routes returns the endpoints of the owner API, those of the optional
// services only when they are present.
func (s *Face) Routes() []httpapi.Endpoint {
	serve, owned, operated := httpapi.Serve, httpapi.Owned, httpapi.Operated
	table := []httpapi.Endpoint{
		owned("GET", "/account", s.handleWhoami),
		owned("POST", "/account/rotate", s.handleRotateOwnToken),
		operated("POST", "/accounts", s.handleCreateAccount),
		operated("GET", "/accounts", s.handleListAccounts),
		operated("GET", "/accounts/{id}", s.handleGetAccount),
		operated("PATCH", "/accounts/{id}", s.handleUpdateAccount),
		operated("POST", "/accounts/{id}/rotate", s.handleRotateAccountToken),

		owned("POST", "/agents", s.handleCreateAgent),
		owned("GET", "/agents", s.handleListAgents),
		owned("GET", "/agents/{ref}", s.handleGetAgent),
		owned("PATCH", "/agents/{ref}", s.handleUpdateAgent),
		owned("DELETE", "/agents/{ref}", s.handleDeleteAgent),
		owned("POST", "/agents/{ref}/tokens", s.handleIssueToken),
		owned("GET", "/agents/{ref}/tokens", s.handleListTokens),
		owned("DELETE", "/agents/{ref}/tokens/{label}", s.handleRevokeToken),
		owned("GET", "/agents/{ref}/inbox", s.handleInbox),
		owned("POST", "/agents/{ref}/agent-token", s.handleRotateAgentToken),
		owned("POST", "/agents/{ref}/webhook-secret", s.handleRotateWebhookSecret),
		owned("GET", "/agents/{ref}/deliveries", s.handleDeliveries),
		serve("GET", "/agents/{ref}/pairings", httpapi.AccessOwnerOrAgent, s.handleListPairings),
		owned("PUT", "/agents/{ref}/upstream-credentials", s.handleSetUpstreamCredentials),
		owned("GET", "/agents/{ref}/front", s.handleFrontStatus),
		owned("GET", "/agents/{ref}/reachability", s.handleReachability),
		owned("POST", "/agents/{ref}/front/verify", s.handleFrontVerify),

		serve("GET", "/tasks/{id}", httpapi.AccessOwnerOrAgent, s.handleGetTaskAny),
		owned("POST", "/tasks/{id}/reply", s.handleReply),
	}
	if s.AuditEntries != nil {
		table = append(table, owned("GET", "/audit", s.handleAudit))
	}
	if s.Wakes != nil {
		table = append(table,
			owned("GET", "/agents/{ref}/wake", s.handleShowWake),
			owned("PUT", "/agents/{ref}/wake", s.handleSetWake),
			owned("DELETE", "/agents/{ref}/wake", s.handleDeleteWake),
			owned("POST", "/agents/{ref}/wake/test", s.handleTestWake),
		)
	}
	if s.Pairing != nil {
		table = append(table,
			serve("POST", "/agents/{ref}/pairings/{code}/approve", httpapi.AccessOwnerOrAgent, s.handleApprovePairing),
			serve("POST", "/agents/{ref}/pairings/{code}/deny", httpapi.AccessOwnerOrAgent, s.handleDenyPairing),
		)
	}
	if s.OutboundPeers != nil {
		table = append(table,
			owned("GET", "/agents/{ref}/peers", s.handleListOutboundPeers),
			owned("PUT", "/agents/{ref}/peers/{alias}", s.handlePutOutboundPeer),
			owned("DELETE", "/agents/{ref}/peers/{alias}", s.handleDeleteOutboundPeer),
		)
	}
	if s.Outbox != nil {
		table = append(table,
			owned("POST", "/agents/{ref}/outbox", s.handleCreateOutbound),
			owned("GET", "/agents/{ref}/outbox", s.handleListOutbound),
			owned("GET", "/agents/{ref}/history/{contextId}", s.handleHistory),
			owned("GET", "/outbox/{id}", s.handleGetOutbound),
			owned("PATCH", "/outbox/{id}", s.handleUpdateOutbound),
		)
	}
	if s.Pushes != nil {
		table = append(table, owned("GET", "/tasks/{id}/pushes", s.handleTaskPushes))
	}
	if s.Network != nil {
		// The network (docs/network.md): approval, communities, community
		// tokens.
		table = append(table,
			operated("POST", "/agents/{ref}/approve", s.handleApprove),
			operated("POST", "/agents/{ref}/unapprove", s.handleUnapprove),
			owned("PUT", "/agents/{ref}/communities/{name}", s.handleJoinCommunity),
			owned("DELETE", "/agents/{ref}/communities/{name}", s.handleLeaveCommunity),
			owned("GET", "/communities", s.handleListCommunities),
			operated("PUT", "/communities/{name}", s.handleConfigureCommunity),
			owned("POST", "/communities/{name}/tokens", s.handleIssueCommunityToken),
			owned("GET", "/communities/{name}/tokens", s.handleListCommunityTokens),
			owned("DELETE", "/communities/{name}/tokens/{label}", s.handleRevokeCommunityToken),
		)
	}
	if s.MCP {
		// The owner's MCP tokens (docs/mcp.md).
		table = append(table,
			owned("POST", "/mcp-tokens", s.handleIssueAccountMCPToken),
			owned("POST", "/agents/{ref}/mcp-tokens", s.handleIssueMCPToken),
			owned("GET", "/agents/{ref}/mcp-tokens", s.handleListAgentMCPTokens),
			owned("GET", "/mcp-tokens", s.handleListMCPTokens),
			owned("DELETE", "/mcp-tokens/{id}", s.handleRevokeMCPToken),
		)
	}
	return table
}
