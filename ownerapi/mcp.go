package ownerapi

import "time"

// MCPTokenIssue is the body of POST /agents/{ref}/mcp-tokens.
type MCPTokenIssue struct {
	// Label names the token among the agent's MCP tokens (the client it
	// is for); default "mcp".
	Label string `json:"label,omitempty"`
}

// MCPToken is an MCP token: the answer of POST /agents/{ref}/mcp-tokens
// (with Token and MCPURL, shown once) and an item of GET
// /agents/{ref}/mcp-tokens and GET /mcp-tokens. The secret is never shown
// again.
type MCPToken struct {
	ID         string     `json:"id"`
	Agent      string     `json:"agent"`
	Label      string     `json:"label"`
	Token      string     `json:"token,omitempty"`
	MCPURL     string     `json:"mcp_url"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
}

// MCPTokenRevoked is the answer of DELETE /mcp-tokens/{id}.
type MCPTokenRevoked struct {
	Revoked bool   `json:"revoked"`
	ID      string `json:"id"`
}
