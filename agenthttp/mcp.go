package agenthttp

import (
	"net/http"

	"github.com/switchboard-dev/switchboard"
)

// MCPHandler serves an agent's MCP endpoint (package mcpserver). The
// server finds the agent; the handler checks everything else, the token
// first.
type MCPHandler interface {
	// ServeAgent serves a request to the agent's {address}/mcp; base is
	// the deployment's public base URL.
	ServeAgent(w http.ResponseWriter, r *http.Request, agent *switchboard.Agent, base string)
	// ServeAccount serves a request to the account endpoint, {base}/mcp.
	ServeAccount(w http.ResponseWriter, r *http.Request, base string)
}

// handleAccountMCP serves {base}/mcp, for account MCP tokens.
func (s *Face) handleAccountMCP(w http.ResponseWriter, r *http.Request) {
	s.MCP.ServeAccount(w, r, s.BaseURL(r))
}

// handleMCP serves {address}/mcp: 404 when there is no such agent, its
// account is disabled or its owner turned MCP off; the MCP handler
// answers the rest (405 to any method but POST).
func (s *Face) handleMCP(w http.ResponseWriter, r *http.Request) {
	agent, ok := s.MCPAgent(w, r)
	if !ok {
		return
	}
	s.MCP.ServeAgent(w, r, agent, s.BaseURL(r))
}
