// Package ownerhttp is the owner and operator API: accounts, agents and
// their credentials, peer tokens, the inbox and replies, wakes, fronts,
// the outbox and synced aliases, pairings' approval, MCP tokens, the
// network's owner routes (approval, communities, community tokens) and
// the audit log. Every route but the few that also take an agent token
// (AccessOwnerOrAgent) runs behind the owner-token check of
// httpapi.Server.Mount; what an account may touch is checked here
// (httpapi.Env.OwnedAgent: another owner's agent reads as not found).
package ownerhttp
