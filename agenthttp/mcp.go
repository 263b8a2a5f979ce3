package agenthttp

import (
	"net/http"
	"strings"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/ownerapi"
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
	agent, err := s.Agents.FindAgentByHandle(r.Context(), strings.ToLower(r.PathValue("handle")))
	if err == nil && (agent.AccountDisabled || agent.MCPOff) {
		err = switchboard.Errorf(switchboard.ENOTFOUND, "agent not found")
	}
	if err != nil {
		if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
			httpapi.WriteJSON(w, http.StatusNotFound, ownerapi.Error{Error: "no MCP endpoint at this address"})
		} else {
			s.WriteError(w, r, err)
		}
		return
	}
	s.MCP.ServeAgent(w, r, agent, s.BaseURL(r))
}
