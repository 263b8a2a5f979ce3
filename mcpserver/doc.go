// Package mcpserver serves every agent's address as a remote MCP server:
// POST {address}/mcp, Streamable HTTP without sessions, built on the
// official Go SDK (github.com/modelcontextprotocol/go-sdk). An agent's
// owner mints an MCP token (sbm_…) for it; the token opens that agent's
// MCP endpoint and nothing else, and no other token opens it.
//
// The tools (tools.go) read the agent's inbox, answer its tasks and send
// work to other agents through the same services the owner API calls
// (relay, outbox, network), in process, under the same rules. No tool
// issues or revokes a token, approves anything or changes a setting. Text
// that other agents wrote is untrusted data: every tool description says
// so, and so does every result that carries it.
//
// The HTTP checks before the SDK (guard.go) are this package's: POST only,
// no credential in the URL, no foreign Origin, the token, a rate limit per
// token, and a known MCP-Protocol-Version. docs/mcp.md describes the
// endpoint for users.
package mcpserver
