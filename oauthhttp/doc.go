// Package oauthhttp is the OAuth face of the HTTP API: pairing's device
// authorization grant (RFC 8628, docs/pairing.md), the authorization
// server and protected resource metadata of each address (RFC 8414,
// RFC 9728), and MCP clients' OAuth 2.1 endpoints (registration, the code
// and refresh grants, revocation; docs/mcp.md, "OAuth").
package oauthhttp
