package ownerapi

// Error is the answer of a failed request: of the owner API and of the other
// routes that are not A2A JSON-RPC.
type Error struct {
	Error string `json:"error"`
	// Reason is set with "error": "no_agent_found": which gate of the
	// network left no agent to take the work (docs/network.md).
	Reason string `json:"reason,omitempty"`
}
