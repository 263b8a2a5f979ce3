package a2abind

import (
	"net/http"

	"github.com/switchboard-dev/switchboard/a2aedge"
	"github.com/switchboard-dev/switchboard/httpapi"
)

// Face serves the HTTP+JSON and gRPC bindings of the edge's addresses,
// and agents' domains.
type Face struct {
	*a2aedge.Edge
	bind bindings // the SDK's HTTP+JSON and gRPC transports; immutable after New
}

// New returns the bindings of edge's addresses.
func New(edge *a2aedge.Edge) *Face {
	s := &Face{Edge: edge}
	s.bind = s.newBindings()
	return s
}

// IsGRPC reports whether r is a call of the gRPC binding; ServeGRPC serves
// it (httpapi.Server.Intercept).
func IsGRPC(r *http.Request) bool { return isGRPC(r) }

// ServeGRPC serves a call of the gRPC binding at the deployment's host.
func (s *Face) ServeGRPC(w http.ResponseWriter, r *http.Request) { s.serveGRPC(w, r, nil) }

// Routes returns the HTTP+JSON binding's endpoints under agents'
// addresses and, with the network, communities'. Any method: the SDK's
// transport answers one it does not serve.
func (s *Face) Routes() []httpapi.Endpoint {
	serve, peer := httpapi.Serve, httpapi.AccessPeer
	table := []httpapi.Endpoint{
		serve("", "/a/{handle}/message:send", peer, s.handleAgentREST),
		serve("", "/a/{handle}/message:stream", peer, s.handleAgentREST),
		serve("", "/a/{handle}/tasks", peer, s.handleAgentREST),
		serve("", "/a/{handle}/tasks/{rest...}", peer, s.handleAgentREST),
		serve("", "/a/{handle}/extendedAgentCard", peer, s.handleAgentREST),
		serve("", "/a/{handle}/v1/{rest...}", peer, s.handleAgentREST),
	}
	if s.Network == nil {
		return table
	}
	community := httpapi.AccessCommunity
	return append(table,
		serve("", "/c/{name}/message:send", community, s.handleCommunityREST),
		serve("", "/c/{name}/message:stream", community, s.handleCommunityREST),
		serve("", "/c/{name}/tasks", community, s.handleCommunityREST),
		serve("", "/c/{name}/tasks/{rest...}", community, s.handleCommunityREST),
		serve("", "/c/{name}/extendedAgentCard", community, s.handleCommunityREST),
		serve("", "/c/{name}/v1/{rest...}", community, s.handleCommunityREST),
	)
}
