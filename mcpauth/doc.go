// Package mcpauth is OAuth 2.1 for MCP clients: an MCP client (Claude
// Code, any client of the MCP authorization spec) registers itself
// (RFC 7591, public clients only), sends its user to the authorization
// endpoint, where the signed-in owner of the agent (or of the account, for
// the account endpoint) consents, and redeems the code with PKCE S256 for
// an MCP token and a refresh token (docs/mcp.md, "OAuth").
//
// The access token is an MCP token (sbm_…) as the owner API mints them,
// so every check of the MCP endpoint applies to it unchanged; a grant
// (switchboard.OAuthGrant) ties the refresh token to it. A refresh
// replaces both tokens; revoking either, or the MCP token through the
// owner API, ends the grant, and so does its authorization code redeemed
// again (RFC 6749 section 4.1.2).
//
// Registration is open, so each address has its own share of it
// (RegistrationsPerHour, MaxClients): no few addresses can keep others
// from registering.
//
// The HTTP faces are elsewhere: httpapi serves registration, the token and
// revocation endpoints and the metadata; dashboard serves the consent
// page. Both call this Service.
package mcpauth
