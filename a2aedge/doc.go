// Package a2aedge is the A2A edge of the HTTP API: each agent's address
// ({base}/a/{handle}, the root for the default agent, the root of an
// agent domain) and each community's ({base}/c/{name}) with their cards
// and landing pages, A2A 1.0 and 0.3 over JSON-RPC with SSE streams. The
// other bindings (package a2abind) run their calls through the same
// methods (seam.go).
//
// Who may call an address is decided in caller.go (authenticateCaller):
// a peer token of the agent or of the community, or the agent token of an
// approved agent that shares a community with it. serveRPC (a2a.go) runs
// every JSON-RPC call through authentication, the rate limit, the body
// limit and the method table, in that order.
package a2aedge
