package switchboard

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"time"
)

// TokenKind says what a token is for. A token is accepted only where its
// kind is expected: a peer token never opens the owner API, an owner token
// never calls an agent's address.
type TokenKind string

// Token kinds.
const (
	TokenOwner TokenKind = "owner" // an account's management credential
	TokenPeer  TokenKind = "peer"  // an outside caller of one agent's address
	TokenAgent TokenKind = "agent" // the agent itself, holding its connection
	// TokenMCP opens the MCP endpoint of one agent ({address}/mcp), and
	// nothing else; no other kind opens it.
	TokenMCP TokenKind = "mcp"
)

// tokenPrefixes are prepended to generated tokens so that a leaked token says
// what it is (and secret scanners can find it). The prefix is informative
// only: authorization checks the stored kind, never the prefix.
var tokenPrefixes = map[TokenKind]string{
	TokenOwner: "sbo_",
	TokenPeer:  "sbp_",
	TokenAgent: "sba_",
	TokenMCP:   "sbm_",
}

// NewWebhookSecret returns a new secret for signing webhook requests. It is
// stored as it is (the server must sign with it), unlike tokens.
func NewWebhookSecret() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return "sbw_" + base64.RawURLEncoding.EncodeToString(b[:])
}

// Token is a stored credential. Only the SHA-256 hash of the secret is kept.
type Token struct {
	Hash      string    // hex SHA-256 of the secret
	Kind      TokenKind // what the token opens
	AccountID string    // owner tokens: the account
	AgentID   string    // peer and agent tokens: the agent (empty for a community's peer token)
	// Community is set on a peer token of a community's address; its
	// AccountID is then the account that issued it.
	Community string
	Label     string // peer tokens: the peer's name, unique among the agent's (or the issuer's in the community) active tokens
	// PeerID identifies the peer a peer token stands for. A rotation (a
	// replacing CreateToken) keeps the replaced token's PeerID; any other new
	// token gets a new one, so a label issued again after a revocation never
	// inherits the old peer's tasks.
	PeerID    string
	CreatedAt time.Time
	RevokedAt *time.Time // nil while active
	// LastUsedAt is when the token last opened something, as recorded by
	// TouchToken (peer and MCP tokens, at most once a minute); nil if never.
	LastUsedAt *time.Time
	// Agents are the agents an account MCP token (kind mcp, no AgentID)
	// acts for, by id.
	Agents []string
	// CreatedAgent is the agent an account MCP token created, if any: it
	// acts for it too, and creates no other.
	CreatedAgent string
	// ExpiresAt, when set, is when the token stops opening anything
	// (FindTokenByHash no longer finds it): an MCP token issued through
	// OAuth, which its client refreshes. Other tokens do not expire.
	ExpiresAt *time.Time
}

// MayActFor reports whether an account MCP token acts for the agent.
func (t *Token) MayActFor(agentID string) bool {
	if agentID == "" || t.AgentID != "" {
		return false
	}
	if t.CreatedAgent == agentID {
		return true
	}
	for _, id := range t.Agents {
		if id == agentID {
			return true
		}
	}
	return false
}

// TokenFilter selects tokens. Nil fields match everything.
type TokenFilter struct {
	Kind      *TokenKind
	AccountID *string
	AgentID   *string
	Community *string
	Label     *string
	Active    bool // only tokens that are not revoked
}

// TokenStore keeps credentials.
type TokenStore interface {
	// CreateToken stores t and sets its PeerID (for peer tokens) and
	// CreatedAt. With replace, every active token with the same kind,
	// account, agent, community and label is revoked in the same transaction and the new
	// token keeps their PeerID (a rotation); without it, an active token with
	// those keys makes it return ECONFLICT. Storing a hash that is already
	// stored is ECONFLICT, except that a replacing CreateToken may reactivate
	// a revoked token of the same kind, account, agent and label.
	CreateToken(ctx context.Context, t *Token, replace bool) error

	// FindTokenByHash returns the active token with the given hash, or
	// ENOTFOUND if there is none, or it was revoked, or it has expired.
	FindTokenByHash(ctx context.Context, hash string) (*Token, error)

	// FindTokens returns the tokens that match f, oldest first.
	FindTokens(ctx context.Context, f TokenFilter) ([]*Token, error)

	// RevokeTokens revokes the active tokens that match f and returns how
	// many it revoked. Revocation takes effect for the next request.
	RevokeTokens(ctx context.Context, f TokenFilter) (int, error)

	// TouchToken records that the token with the hash was used at the
	// given time. It does not change what FindTokenByHash returns and
	// returns nil if no such token exists.
	TouchToken(ctx context.Context, hash string, at time.Time) error

	// RecordCreatedAgent records that the active account MCP token with the
	// hash created the agent. It returns ECONFLICT if the token created
	// one already, and ENOTFOUND if there is no such token.
	RecordCreatedAgent(ctx context.Context, hash, agentID string) error
}

// TokenID is the short public id of a token: the first 16 hex digits of
// its hash. Owners name a token by it (to revoke an MCP token); it says
// nothing about the secret.
func TokenID(hash string) string {
	if len(hash) < 16 {
		return hash
	}
	return hash[:16]
}

// NewToken returns a new secret of the given kind (256 random bits, base64url,
// with the kind's prefix) and its hash for storage.
func NewToken(kind TokenKind) (secret, hash string) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	secret = tokenPrefixes[kind] + base64.RawURLEncoding.EncodeToString(b[:])
	return secret, HashToken(secret)
}

// HashToken returns the hex SHA-256 of a token secret, the form in which
// tokens are stored and looked up. Looking up by hash means the secret itself
// is never compared byte by byte, so timing reveals nothing about it.
func HashToken(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// MinPresetTokenLen is the shortest owner token an operator may preset.
const MinPresetTokenLen = 16
