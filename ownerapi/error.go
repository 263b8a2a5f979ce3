package ownerapi

// Error is the answer of a failed request: of the owner API and of the other
// routes that are not A2A JSON-RPC.
type Error struct {
	Error string `json:"error"`
}
