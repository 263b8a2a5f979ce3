package agenthttp

import (
	"net/http"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/network"
	"github.com/switchboard-dev/switchboard/outbox"
	"github.com/switchboard-dev/switchboard/relay"
)

// Deps are the services the agents' face serves. Each optional one that is
// nil leaves its routes unmounted: they answer 404 like any unknown path.
type Deps struct {
	Tasks *relay.Service
	// Limiter counts the requests of each peer, and the pushes each agent
	// receives from each address; required.
	Limiter switchboard.RateLimiter
	// Connect serves connector agents' WebSocket connections at /connect;
	// nil: not served.
	Connect http.Handler
	// Network sends work by name or discovery and lists the directory; nil:
	// POST /tasks and GET /directory are not served.
	Network *network.Service
	// Outbox receives the pushes that answer what agents sent; nil:
	// {address}/push is not served.
	Outbox *outbox.Service
	// MCP serves agents' MCP endpoints; nil: not served.
	MCP MCPHandler
}

// Face serves the agents' endpoints.
type Face struct {
	*httpapi.Env
	Deps
}

// New returns the agents' face.
func New(env *httpapi.Env, deps Deps) *Face { return &Face{Env: env, Deps: deps} }

// Routes returns the endpoints of the services present.
func (s *Face) Routes() []httpapi.Endpoint {
	serve := httpapi.Serve
	var table []httpapi.Endpoint
	if s.Connect != nil {
		table = append(table, serve("GET", "/connect", httpapi.AccessAgent, s.Connect.ServeHTTP))
	}
	if s.Outbox != nil {
		table = append(table, serve("POST", "/a/{handle}/push", httpapi.AccessPush, s.handlePush))
	}
	if s.Network != nil {
		// The network (docs/network.md): the directory, and agents' own
		// work sent by name or discovery.
		table = append(table,
			serve("GET", "/directory", httpapi.AccessOwnerOrAgent, s.handleDirectory),
			serve("POST", "/tasks", httpapi.AccessOwnerOrAgent, s.handleNetworkTask),
		)
	}
	if s.MCP != nil {
		// MCP (docs/mcp.md): every address as an MCP server.
		table = append(table,
			serve("POST", "/a/{handle}/mcp", httpapi.AccessMCP, s.handleMCP),
			serve("", "/a/{handle}/mcp", httpapi.AccessPublic, s.handleMCP), // 405
			serve("POST", "/mcp", httpapi.AccessMCP, s.handleAccountMCP),
			serve("", "/mcp", httpapi.AccessPublic, s.handleAccountMCP), // 405
		)
	}
	return table
}
