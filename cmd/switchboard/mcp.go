package main

import (
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/mcpauth"
	"github.com/switchboard-dev/switchboard/mcpserver"
	"github.com/switchboard-dev/switchboard/netguard"
	"github.com/switchboard-dev/switchboard/ratelimit"
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

// newOAuth returns the OAuth service of MCP clients. Clients whose
// client_id is the URL of their metadata document are fetched through
// the network guard (opened by --allow-private-networks), counted per
// address across instances on PostgreSQL.
func (m *Main) newOAuth(cfg Config, db *sqlstore.DB) *mcpauth.Service {
	logger := m.Logger.With("face", "mcp-oauth")
	var fetches switchboard.RateLimiter = ratelimit.NewMemory(mcpauth.DocumentFetchesPerHour, time.Hour)
	if isPostgres(cfg.Database) {
		shared := ratelimit.NewShared(db, mcpauth.DocumentFetchesPerHour, time.Hour)
		shared.Log = m.Logger
		fetches = shared
	}
	docs := mcpauth.NewDocuments(mcpauth.DocumentOptions{
		Guard:   netguard.Options{AllowPrivate: cfg.AllowPrivateNetworks, Allow: cfg.OutboundAllow},
		RootCAs: cfg.ClientMetadataRootCAs, Limiter: fetches, Logger: logger,
	})
	return mcpauth.New(mcpauth.Deps{Store: db, Tokens: db, Documents: docs, Logger: logger}, mcpauth.Config{})
}
