package switchboard

import (
	"context"
	"time"
)

// Community is a named group of agents that may send work to each other,
// by name or by discovery, and whose members share a public address,
// {base}/c/{name} (docs/network.md). It comes into being when an agent
// joins it or the operator configures it, and stays.
type Community struct {
	Name      string // a DNS-label slug (NormalizeHandle's rules)
	Closed    bool   // only the operator puts agents in a closed community
	Members   int    // how many agents are in it, as read
	CreatedAt time.Time
	UpdatedAt time.Time
}

// MaxCommunitiesPerAgent is the most communities one agent may be in: it
// bounds what discovery and the directory read for one sender.
const MaxCommunitiesPerAgent = 32

// MetaTaskDescription is the message metadata key under which work sent
// on the network (POST /tasks) keeps its task_description apart from its
// payload.message: a webhook agent receives the two in fields of their
// own, as the original network sent them. Its value is untrusted text.
const MetaTaskDescription = "task_description"

// Reach says how an agent can be reached now, as discovery and the
// directory see it (docs/network.md, "Live").
type Reach int

// Reaches, from best to worst.
const (
	// ReachLive: a connector agent whose session was renewed within the
	// last heartbeat interval, on any instance; or a webhook agent whose
	// endpoint has no delivery waiting for a retry after a failure.
	ReachLive Reach = iota
	// ReachGrace: a connector agent whose socket dropped less than the
	// reconnect grace ago; its work waits for it to come back.
	ReachGrace
	// ReachNone: anything else, and every inbox agent.
	ReachNone
)

// Liveness holds the times that decide an agent's Reach.
type Liveness struct {
	// LiveSince: a connector session renewed at or after it is live.
	LiveSince time.Time
	// GraceSince: a connector session renewed at or after it, or ended
	// at or after EndedSince, is in its grace when it is not live.
	GraceSince time.Time
	EndedSince time.Time
}

// DiscoveryQuery asks the store for the one agent discovery chooses:
// approved, accepting tasks, of an enabled account, in connector or
// webhook mode, reachable (live first, then in grace), in one of the
// communities, offering the skill, and not the sender. Among those of the
// best reach, the one with the fewest unfinished tasks wins; among equals,
// the first whose id sorts after After, wrapping around (round robin).
type DiscoveryQuery struct {
	// Communities are the communities to look in. Empty: every community
	// SenderID is in.
	Communities []string
	// SenderID, when set, is left out of the candidates.
	SenderID string
	// Skill, when set, is a public card skill's id or one of its tags,
	// compared without regard to case.
	Skill string
	Liveness
	// After is the round-robin cursor: the id of the agent chosen last
	// for the same question.
	After string
	// AgentID, when set, is the one member considered: a choice checked
	// again against the store.
	AgentID string
	// Sleepers asks for the members that sleep instead: inbox agents,
	// approved, accepting tasks, of an enabled account, that can be woken
	// (Member.Wakeable), fewest unfinished tasks first (Candidate.Reach
	// ReachNone). Discovery asks it only when a sender allows it
	// (wake_sleepers) and no member is live or in its grace.
	Sleepers bool
}

// Ranked is a candidate of discovery as the policy ranks it, without the
// agent itself: what a decision taken in memory reads.
type Ranked struct {
	AgentID   string
	Handle    string
	Reach     Reach
	OpenTasks int // its unfinished tasks, as the store counts them
	// RenewedAt is when the agent's connector session last renewed its
	// heartbeat (zero when it has none): it stays live while that is
	// within Liveness.LiveSince.
	RenewedAt time.Time
}

// Candidate is the agent discovery chose, with why.
type Candidate struct {
	Agent     *Agent
	Reach     Reach
	OpenTasks int // its unfinished tasks, as the store counts them
}

// DiscoveryGates counts the members that pass each gate of a
// DiscoveryQuery in turn: a query that found no one says which gate
// emptied the list.
type DiscoveryGates struct {
	Members   int // in the communities, not the sender, of an enabled account
	Approved  int // … and approved
	Accepting int // … and accepting tasks, in connector or webhook mode
	Skilled   int // … and offering the skill
	Reachable int // … and live or in their grace
	// Asleep counts the members that pass every gate but reach and can
	// be woken (Member.Wakeable): what wake_sleepers would choose among.
	Asleep int
}

// MemberFilter selects the members of communities for a directory.
type MemberFilter struct {
	// Communities are those to list the members of; nil: every community
	// (the operator's view).
	Communities []string
	// Skill, when set, keeps the agents offering it (id or tag).
	Skill string
	// ExcludeAgentID, when set, is left out.
	ExcludeAgentID string
	Liveness
	// OnlyLive keeps the agents whose reach is ReachLive.
	OnlyLive bool
	// After continues a listing after this handle; Limit bounds it.
	After string
	Limit int
}

// Member is an agent as a directory shows it.
type Member struct {
	Agent *Agent
	// Communities are the agent's communities among the filter's (all of
	// them when the filter names none), sorted.
	Communities []string
	Reach       Reach
	// Wakeable reports whether the agent sleeps and can be woken: in inbox
	// mode, with a wake configured whose last finished wake was sent (not
	// failed nor dropped). A task for it waits in its inbox while the wake
	// goes out.
	Wakeable bool
}

// CommunityStore keeps communities, their members and what discovery and
// the directory read. Who may change what is not its concern (the network
// service decides); it keeps each change whole.
type CommunityStore interface {
	// SaveCommunity creates the community or changes whether it is
	// closed, and reports whether it created it. It sets c's times and
	// Members.
	SaveCommunity(ctx context.Context, c *Community) (created bool, err error)

	// FindCommunity returns the community with its member count, or
	// ENOTFOUND.
	FindCommunity(ctx context.Context, name string) (*Community, error)

	// LookupCommunity returns the community as FindCommunity does but
	// without its member count (Members is 0), or ENOTFOUND: one row read
	// by its key, what a request at the community's address needs.
	LookupCommunity(ctx context.Context, name string) (*Community, error)

	// FindCommunities returns communities by name with their member
	// counts: those with a member of the account when accountID is set,
	// and every community otherwise.
	FindCommunities(ctx context.Context, accountID string) ([]*Community, error)

	// JoinCommunity puts the agent in the community, creating the
	// community (open) if needed, and reports whether it joined (false:
	// it was a member already). It returns ENOTFOUND when the agent does
	// not exist, EFORBIDDEN when the community is closed and closedOK is
	// false, and EINVALID when the agent is in MaxCommunitiesPerAgent
	// communities already.
	JoinCommunity(ctx context.Context, agentID, community string, closedOK bool) (joined bool, err error)

	// LeaveCommunity takes the agent out of the community, or returns
	// ENOTFOUND when it is not in it.
	LeaveCommunity(ctx context.Context, agentID, community string) error

	// FindAgentCommunities returns the communities of each of the agents,
	// sorted; an agent in none is missing from the map.
	FindAgentCommunities(ctx context.Context, agentIDs []string) (map[string][]string, error)

	// ShareCommunity reports whether the two agents are in a community
	// together.
	ShareCommunity(ctx context.Context, agentA, agentB string) (bool, error)

	// Discover returns the agent q chooses (one query), or nil and no
	// error when there is none.
	Discover(ctx context.Context, q DiscoveryQuery) (*Candidate, error)

	// RankCandidates returns every agent Discover would choose among (its
	// After aside), in no order.
	RankCandidates(ctx context.Context, q DiscoveryQuery) ([]Ranked, error)

	// DiscoveryGeneration returns a number that moves on once a change
	// that could make an agent stop being one of RankCandidates' has
	// committed: to accounts, agents, memberships or skills, or one that
	// can take an agent's reach away (a session ended, a delivery put back
	// after a failure). A change another instance makes counts once this
	// one has heard of it. ok is false when the store cannot tell (then
	// every pick is to be checked with Discover). Passing time is not a
	// change: a ranking's RenewedAt says how long each agent stays live.
	DiscoveryGeneration() (gen uint64, ok bool)

	// CountDiscoveryGates counts what passes each gate of q: why Discover
	// found no one.
	CountDiscoveryGates(ctx context.Context, q DiscoveryQuery) (DiscoveryGates, error)

	// FindMembers returns the members f selects (of enabled accounts), by
	// handle, at most f.Limit (0: no bound).
	FindMembers(ctx context.Context, f MemberFilter) ([]*Member, error)
}
