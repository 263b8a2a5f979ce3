package ownerapi

import "time"

// Token is a peer token: the answer of POST /agents/{ref}/tokens, and an
// item of GET /agents/{ref}/tokens. The secret is shown only once, in the
// answer that issues it.
type Token struct {
	Label string `json:"label"`
	// Community is set on a peer token of a community's address.
	Community string     `json:"community,omitempty"`
	Token     string     `json:"token,omitempty"`
	Active    bool       `json:"active"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
	// LastUsedAt is when the token last opened the address (written at
	// most once a minute); absent if never.
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	// Address and AgentCard tell the peer where to use the token; they are
	// set in the answer that issues it.
	Address   string `json:"address,omitempty"`
	AgentCard string `json:"agent_card,omitempty"`
}

// TokenIssue is the body of POST /agents/{ref}/tokens. Rotate replaces an
// active token with the same label.
type TokenIssue struct {
	Label  string `json:"label"`
	Rotate bool   `json:"rotate"`
}

// TokenRevoked is the answer of DELETE /agents/{ref}/tokens/{label}.
type TokenRevoked struct {
	Label   string `json:"label"`
	Revoked bool   `json:"revoked"`
}
