package ownerapi

import "time"

// OutboundPeerPut is the body of PUT /agents/{ref}/peers/{alias}: a synced
// alias, the remote agent's address and the peer token the server presents
// there (sealed at rest, never returned).
type OutboundPeerPut struct {
	URL   string `json:"url"`
	Token string `json:"token"`
}

// OutboundPeer is a synced alias as the owner API shows it: never its
// token. HasToken is false when the token kept no longer opens on the
// server (its keys changed): sync the alias again.
type OutboundPeer struct {
	Alias    string    `json:"alias"`
	URL      string    `json:"url"`
	HasToken bool      `json:"has_token"`
	SyncedAt time.Time `json:"synced_at"`
}

// OutboundPeers is the answer of GET /agents/{ref}/peers.
type OutboundPeers struct {
	Agent string         `json:"agent"`
	Peers []OutboundPeer `json:"peers"`
}

// OutboundPeerDeleted is the answer of DELETE /agents/{ref}/peers/{alias}.
type OutboundPeerDeleted struct {
	Deleted bool   `json:"deleted"`
	Alias   string `json:"alias"`
}
