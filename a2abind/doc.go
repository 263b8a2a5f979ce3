// Package a2abind serves the A2A edge's other bindings and agents'
// domains: HTTP+JSON under each address and gRPC at the host, through
// the A2A SDK's transports over one RequestHandler (a2a_binding.go) that
// runs every call as the edge's JSON-RPC methods run it (package a2aedge,
// seam.go: the same Authenticate, the same methods, the same streams);
// and a request to an agent's domain as that agent's address
// (AgentDomains, domain.go).
package a2abind
