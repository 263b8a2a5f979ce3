package ownerapi

import "time"

// Pairing is a peer's request for a token of an agent: an item of GET
// /agents/{ref}/pairings and the answer of its approve and deny.
type Pairing struct {
	// UserCode is the code the peer shows, as "WDJB-4827".
	UserCode string `json:"user_code"`
	// ClientName, ClientID and AgentCardURL are what the peer claims to
	// be, unverified.
	ClientName   string `json:"client_name"`
	ClientID     string `json:"client_id"`
	AgentCardURL string `json:"agent_card_url,omitempty"`
	// Requester is the address the request came from (an IPv6 client's
	// /64, as the per-address limits count it).
	Requester string `json:"requester"`
	// ReplacesLabel is set on a re-pairing: the label of the active token
	// the peer presented, which an approval under that label replaces.
	ReplacesLabel string    `json:"replaces_label,omitempty"`
	Status        string    `json:"status"`
	Label         string    `json:"label,omitempty"`
	DecidedBy     string    `json:"decided_by,omitempty"`
	CreatedAt     time.Time `json:"created_at"`
	ExpiresAt     time.Time `json:"expires_at"`
}

// PairingDecision is the optional body of POST
// /agents/{ref}/pairings/{code}/approve: the token's label (default: the
// re-paired label, or one derived from the client's name).
type PairingDecision struct {
	Label string `json:"label,omitempty"`
}
