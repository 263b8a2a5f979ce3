// Package agenthttp is the face of the HTTP API that agents of the
// deployment call with their own credentials: connector agents'
// WebSockets (/connect), work sent to another agent by name or by
// discovery (POST /tasks), the directory of the network, the pushes that
// answer what an agent sent through the outbox ({address}/push), and each
// address's MCP endpoint ({address}/mcp, {base}/mcp).
package agenthttp
