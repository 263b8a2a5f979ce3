package main

import (
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/mcpserver"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// newMCP returns the MCP endpoints' handler, or nil when the
// configuration turns MCP off (then no MCP route is served).
func (m *Main) newMCP(cfg Config, db *sqlstore.DB, limiter switchboard.RateLimiter) httpapi.MCPHandler {
	if cfg.MCPOff {
		return nil
	}
	return mcpserver.New(mcpserver.Deps{
		Accounts: db, Agents: db, Tokens: db, Tasks: m.Tasks, Outbox: m.Outbox, Network: m.Network, Pairing: m.Pairing, Limiter: limiter,
		OutboundPeers: m.OutboundPeers,
		Logger:        m.Logger.With("face", "mcp"), OnAuthenticated: httpapi.MarkAuthenticated,
	}, mcpserver.Config{Version: version, MaxBody: cfg.MaxBody, OAuth: true})
}
