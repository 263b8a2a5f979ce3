package switchboard

import (
	"context"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// DeliveryMode says how an agent receives the work sent to its address.
type DeliveryMode string

// Delivery modes. Every mode accepts tasks the same way; they differ in how
// the accepted work reaches the agent.
const (
	// ModeConnector pushes tasks down the one outbound WebSocket the agent
	// holds open (switchboard connect, or any client of the connector
	// protocol); the agent answers on it. The default for new agents.
	ModeConnector DeliveryMode = "connector"
	// ModeInbox stores each task as submitted; the agent (or its owner)
	// reads the inbox and replies through the owner API or the CLI.
	ModeInbox DeliveryMode = "inbox"
	// ModeWebhook posts each task to the agent's endpoint in the legacy
	// webhook format and reads the answer from the response.
	ModeWebhook DeliveryMode = "webhook"
	// ModeFront forwards each task to an A2A server that already runs at
	// an https URL (the agent's Front), with the owner's credentials for
	// it, and relays its answers (docs/front.md).
	ModeFront DeliveryMode = "front"
)

// ValidMode reports whether m is a delivery mode this build supports.
func ValidMode(m DeliveryMode) bool {
	return m == ModeConnector || m == ModeInbox || m == ModeWebhook || m == ModeFront
}

// Live reports whether tasks of this mode are delivered to a running agent
// (and so are worth waiting for in a blocking call), rather than stored for
// it to read.
func (m DeliveryMode) Live() bool { return m == ModeConnector || m == ModeWebhook || m == ModeFront }

// Agent is a named public address and the card served there.
type Agent struct {
	ID        string // UUID, stable for the agent's life
	AccountID string // the owning account
	Handle    string // DNS-label slug: the address is {base}/a/{handle}
	// Domain is the host name the agent is also served at, at the root
	// (https://{domain}/, docs/agents.md "Agent domains"), or empty: lower
	// case, ASCII (an internationalised name in punycode), without a
	// trailing dot. No two agents hold the same.
	Domain      string
	Name        string
	Description string
	Mode        DeliveryMode
	Version     string           // the card's version field
	Skills      []a2a.AgentSkill // advertised on the public card
	// ExtendedSkills are shown only on the extended card, to authenticated
	// peers. When there are any, the card declares extendedAgentCard.
	ExtendedSkills []a2a.AgentSkill
	// AcceptsTasks false stops new tasks from being offered to the agent:
	// they wait (until their delivery deadline) and are offered once it is
	// true again. Follow-ups and cancels of tasks it holds still reach it.
	// Work sent to it by name (its address, or on the network) is taken
	// and waits; discovery does not choose it (docs/network.md, "Paused
	// agents").
	AcceptsTasks bool
	// Approved lets the agent take part in the network: be chosen by
	// discovery, be sent work by other agents, and send them work. Agents
	// are approved as they are created unless the deployment requires the
	// operator's approval (docs/network.md). AcceptsTasks stays the
	// owner's own switch.
	Approved bool
	// Pairing says who may approve a peer's request for a token of the
	// agent (docs/pairing.md); empty is read as PairingHuman.
	Pairing PairingMode
	// MCPOff turns the agent's MCP endpoint ({address}/mcp) off: it
	// answers 404, whatever the token. New agents serve MCP.
	MCPOff bool
	// Endpoint is the base URL a webhook agent receives tasks at
	// ({Endpoint}/a2a/task).
	Endpoint string
	// WebhookSecret signs the requests to a webhook agent's endpoint.
	WebhookSecret string
	CreatedAt     time.Time
	UpdatedAt     time.Time

	// AccountDisabled is read from the owning account: a disabled account's
	// agents are not served.
	AccountDisabled bool
}

// HasExtendedCard reports whether the agent serves an extended card to
// authenticated peers.
func (a *Agent) HasExtendedCard() bool { return len(a.ExtendedSkills) > 0 }

// AgentFilter selects agents. Nil fields match everything.
type AgentFilter struct {
	AccountID *string
}

// AgentUpdate holds the fields to change; nil fields stay as they are.
type AgentUpdate struct {
	Name           *string
	Description    *string
	Mode           *DeliveryMode
	Version        *string
	Skills         *[]a2a.AgentSkill
	ExtendedSkills *[]a2a.AgentSkill
	AcceptsTasks   *bool
	Approved       *bool
	Pairing        *PairingMode
	MCPOff         *bool
	Endpoint       *string
	WebhookSecret  *string
	// Domain sets the agent's domain (as Agent.Domain holds it); ""
	// removes it.
	Domain *string
	// DomainQuota, when set, bounds the agents of the agent's account
	// that hold a domain: an update that gives the agent a domain while
	// it holds none is refused (EUNPROCESSABLE) when the account's other
	// agents hold *DomainQuota already. Nil: no bound.
	DomainQuota *int
}

// AgentStore keeps agents.
type AgentStore interface {
	// CreateAgent stores a. It returns ECONFLICT if the handle is taken,
	// EUNPROCESSABLE if a.Domain is another agent's.
	CreateAgent(ctx context.Context, a *Agent) error

	// FindAgentByID returns the agent, or ENOTFOUND.
	FindAgentByID(ctx context.Context, id string) (*Agent, error)

	// FindAgentByHandle returns the agent, or ENOTFOUND.
	FindAgentByHandle(ctx context.Context, handle string) (*Agent, error)

	// FindAgentByDomain returns the agent whose Domain is domain (as
	// Agent.Domain holds it: lower case, ASCII), or ENOTFOUND. Every
	// request to an agent domain asks it, so it is answered from memory
	// where the store can.
	FindAgentByDomain(ctx context.Context, domain string) (*Agent, error)

	// FindAgents returns the agents that match f, ordered by handle.
	FindAgents(ctx context.Context, f AgentFilter) ([]*Agent, error)

	// UpdateAgent changes an agent and returns it, or ENOTFOUND. It
	// returns EUNPROCESSABLE if upd.Domain is another agent's, or if
	// upd.DomainQuota refuses it.
	UpdateAgent(ctx context.Context, id string, upd AgentUpdate) (*Agent, error)

	// DeleteAgent removes an agent with its tokens, tasks, events and push
	// configurations, or returns ENOTFOUND.
	DeleteAgent(ctx context.Context, id string) error
}

// MaxDescriptionLen is the longest agent description.
const MaxDescriptionLen = 4000

// MaxSkills is the most skills an agent may list (public plus extended).
const MaxSkills = 64
