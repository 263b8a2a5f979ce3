package switchboard

import (
	"context"
	"regexp"
	"time"
)

// OutboundPeer is a synced alias: a remote A2A agent one of our agents
// sends to, by a name its owner chose, with the peer token the server
// presents there. The owner uploads it from the client config
// (switchboard peers sync), so that the MCP tools, which have no client
// config, can send to it. The token is sealed at rest and never shown.
type OutboundPeer struct {
	AgentID string // our agent, the sender
	Alias   string // ValidAlias; exact, case included
	URL     string // the remote agent's address (its card is read there)
	// Token is the peer token sent to URL's origin, and to no other. It is
	// empty when Unreadable.
	Token string
	// Unreadable says the stored token does not open with this server's
	// keys (they changed, or the row was altered): the owner syncs the
	// alias again.
	Unreadable bool
	SyncedAt   time.Time
}

// MaxAliasLen bounds an alias.
const MaxAliasLen = 64

// aliasPattern is what an alias may be: it must not look like a URL.
var aliasPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// ValidAlias reports whether s may be an alias: 1 to 64 of A-Z a-z 0-9 _ . -
// (the rule of the client config's aliases, which are synced as they are).
func ValidAlias(s string) bool { return aliasPattern.MatchString(s) }

// OutboundPeerStore keeps agents' synced aliases.
type OutboundPeerStore interface {
	// PutOutboundPeer creates or replaces the alias p.Alias of agent
	// p.AgentID, setting p.SyncedAt; it reports whether it created it, and
	// returns ENOTFOUND if the agent does not exist.
	PutOutboundPeer(ctx context.Context, p *OutboundPeer) (created bool, err error)

	// FindOutboundPeer returns one alias of an agent, its token opened (or
	// Unreadable), or ENOTFOUND.
	FindOutboundPeer(ctx context.Context, agentID, alias string) (*OutboundPeer, error)

	// FindOutboundPeers returns an agent's aliases, ordered by alias, their
	// tokens opened (or Unreadable).
	FindOutboundPeers(ctx context.Context, agentID string) ([]*OutboundPeer, error)

	// DeleteOutboundPeer deletes one alias of an agent, or returns
	// ENOTFOUND.
	DeleteOutboundPeer(ctx context.Context, agentID, alias string) error
}
