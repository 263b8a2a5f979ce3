package switchboard

import (
	"context"
	"time"
)

// OAuthClient is an MCP client registered by dynamic client registration
// (RFC 7591): a public client (no secret) that the authorization code grant
// with PKCE gets an MCP token for (docs/mcp.md, "OAuth").
type OAuthClient struct {
	// ID is the client_id the server chose.
	ID string
	// Name is the client_name it claimed, cleaned; unverified.
	Name string
	// RedirectURIs are where codes may be sent: https, or http on a
	// loopback host (whose port is not compared, RFC 8252).
	RedirectURIs []string
	// ApplicationType is "native" or "web".
	ApplicationType string
	// Requester is the address the registration came from.
	Requester string
	CreatedAt time.Time
}

// OAuthClientLimits bound registrations. Each address has a share of its
// own: the bound on every client never refuses an address that holds
// fewer clients than another (see CreateOAuthClient).
type OAuthClientLimits struct {
	// PerRequester is the most registrations one address may make in
	// Window (zero: no bound). A registration counts for its window even
	// once its client is deleted.
	PerRequester int
	Window       time.Duration
	// MaxClients is the most clients stored; when it is reached, clients
	// registered before PruneBefore that hold no grant, and clients
	// registered before UnusedBefore that hold no grant and no
	// authorization code (unused: no owner consented), are deleted
	// first.
	MaxClients   int
	PruneBefore  time.Time
	UnusedBefore time.Time
}

// OAuthTarget is what an OAuth grant opens: one agent's MCP endpoint
// (AgentID set), or the account endpoint for some agents of the account
// (AgentID empty, Agents set).
type OAuthTarget struct {
	AccountID string
	AgentID   string
	Agents    []string
}

// OAuthCode is an authorization code the owner's consent issued. Only its
// hash is stored; it is used once.
type OAuthCode struct {
	Hash     string
	ClientID string
	// ClientName is the name the client claimed when the owner consented.
	ClientName  string
	RedirectURI string
	// Challenge is the PKCE S256 code challenge.
	Challenge string
	// Resource is the MCP URL the token is for.
	Resource string
	Target   OAuthTarget
	// Label is the label of the MCP token the code is redeemed for.
	Label     string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// OAuthGrant is a live authorization: the refresh token (its hash) and
// the MCP token it issued last (its hash). A refresh replaces both.
type OAuthGrant struct {
	RefreshHash string
	AccessHash  string
	// ClientID is a registered client's id, or the URL of a client's
	// metadata document.
	ClientID string
	// ClientName is the name the client claimed when the owner consented
	// (empty for grants made before it was recorded).
	ClientName string
	Target     OAuthTarget
	// Label is the label of the grant's MCP token.
	Label     string
	CreatedAt time.Time
	// RotatedAt is when a refresh last rotated the grant (zero: never).
	RotatedAt time.Time
	// CodeHash is the hash of the authorization code the grant was
	// issued from: a replay of that code ends the grant (empty for grants
	// made before it was recorded).
	CodeHash string
}

// OAuthGrantFilter selects grants.
type OAuthGrantFilter struct {
	// AccountID, if set, selects the grants of the account's agents and
	// account endpoint.
	AccountID *string
}

// OAuthStore keeps registered clients, authorization codes and grants.
type OAuthStore interface {
	// CreateOAuthClient stores a client. ERATELIMITED when its Requester
	// registered lim.PerRequester clients in lim.Window before CreatedAt.
	// When lim.MaxClients are stored even after pruning, the oldest unused
	// client (no grant, no code) of the address that holds the most
	// clients is deleted to make room, if that address holds more than
	// the Requester; EQUOTA otherwise.
	CreateOAuthClient(ctx context.Context, c *OAuthClient, lim OAuthClientLimits) error

	// FindOAuthClient returns the client with the id, or ENOTFOUND.
	FindOAuthClient(ctx context.Context, id string) (*OAuthClient, error)

	// CreateOAuthCode stores an authorization code.
	CreateOAuthCode(ctx context.Context, c *OAuthCode) error

	// TakeOAuthCode marks the code with the hash used and returns it as
	// it was, or ENOTFOUND: a code is taken once, whatever happens next.
	// A code taken before (presented again: a replay) is returned with
	// ECONFLICT, and marked so that a grant issued from its first use and
	// not stored yet is refused (CreateOAuthGrant). A used code is kept
	// until DeleteOAuthCodes.
	TakeOAuthCode(ctx context.Context, hash string) (*OAuthCode, error)

	// CreateOAuthGrant stores a grant; ECONFLICT when its refresh hash is
	// stored already, or when the code it was issued from (CodeHash) was
	// presented again since it was taken.
	CreateOAuthGrant(ctx context.Context, g *OAuthGrant) error

	// DeleteOAuthGrantOfCode deletes the grant issued from the code with
	// the hash (its CodeHash) and returns it, or ENOTFOUND.
	DeleteOAuthGrantOfCode(ctx context.Context, codeHash string) (*OAuthGrant, error)

	// RotateOAuthGrant replaces the grant whose refresh hash is oldRefresh
	// with the new refresh and access hashes, a compare-and-swap, and
	// returns it as it was. When oldRefresh was a grant's refresh hash
	// before its last rotation (the token used twice), it returns that
	// grant, unchanged, with ECONFLICT; ENOTFOUND when no grant has or had
	// it (unknown, or rotated more than once since, or just rotated by a
	// call at the same time).
	RotateOAuthGrant(ctx context.Context, oldRefresh, newRefresh, newAccess string) (*OAuthGrant, error)

	// DeleteOAuthGrant deletes the grant whose refresh or access hash is
	// hash and returns it, or ENOTFOUND.
	DeleteOAuthGrant(ctx context.Context, hash string) (*OAuthGrant, error)

	// FindOAuthGrants returns the grants the filter selects, oldest
	// first.
	FindOAuthGrants(ctx context.Context, f OAuthGrantFilter) ([]*OAuthGrant, error)

	// DeleteOAuthCodes deletes the codes, used or not, that expired
	// before the given time and returns how many.
	DeleteOAuthCodes(ctx context.Context, expiredBefore time.Time) (int, error)
}
