package ownerapi

import "time"

// MCPTokenIssue is the body of POST /agents/{ref}/mcp-tokens.
type MCPTokenIssue struct {
	// Label names the token among the agent's MCP tokens (the client it
	// is for); default "mcp".
	Label string `json:"label,omitempty"`
}

// AccountMCPTokenIssue is the body of POST /mcp-tokens: an account MCP
// token, for the account endpoint ({base}/mcp), acting for the agents
// named (handles or ids, the caller's own) and for one agent it may create.
type AccountMCPTokenIssue struct {
	Label  string   `json:"label,omitempty"`
	Agents []string `json:"agents"`
}

// MCPToken is an MCP token: the answer of POST /agents/{ref}/mcp-tokens
// (with Token and MCPURL, shown once) and an item of GET
// /agents/{ref}/mcp-tokens and GET /mcp-tokens. The secret is never shown
// again.
type MCPToken struct {
	ID string `json:"id"`
	// Agent is the agent of an agent's token; empty for an account token,
	// whose agents are in Agents (handles; the one it created last).
	Agent      string     `json:"agent"`
	Agents     []string   `json:"agents,omitempty"`
	Label      string     `json:"label"`
	Token      string     `json:"token,omitempty"`
	MCPURL     string     `json:"mcp_url"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	// ExpiresAt is set on a token issued through OAuth, which its client
	// refreshes.
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	// Grant is set on the token of a live OAuth grant.
	Grant *MCPGrant `json:"grant,omitempty"`
}

// MCPGrant is the OAuth grant an MCP token belongs to: the client that
// holds it and when the owner allowed it.
type MCPGrant struct {
	// ClientID is a registered client's id, or the https URL of its
	// metadata document.
	ClientID string `json:"client_id"`
	// ClientName is the name the client claimed (not verified).
	ClientName string    `json:"client_name"`
	CreatedAt  time.Time `json:"created_at"`
}

// MCPTokenRevoked is the answer of DELETE /mcp-tokens/{id}.
type MCPTokenRevoked struct {
	Revoked bool   `json:"revoked"`
	ID      string `json:"id"`
}
