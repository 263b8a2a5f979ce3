package ownerapi

import (
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Agent is an agent: the answer of GET, POST and PATCH /agents; GET /agents
// lists them.
type Agent struct {
	ID        string `json:"id"`
	AccountID string `json:"account_id"`
	Handle    string `json:"handle"`
	// Domain is the host name the agent is also served at, at its root
	// (docs/agents.md, "Agent domains"); then Address, AgentCard and
	// MCPURL are on it.
	Domain         string           `json:"domain,omitempty"`
	Name           string           `json:"name"`
	Description    string           `json:"description"`
	Mode           string           `json:"mode"`
	Version        string           `json:"version"`
	Skills         []a2a.AgentSkill `json:"skills"`
	ExtendedSkills []a2a.AgentSkill `json:"extended_skills"`
	AcceptsTasks   bool             `json:"accepts_tasks"`
	// Approved says whether the agent is on the network (docs/network.md):
	// the operator approves agents when the deployment requires it.
	Approved bool `json:"approved"`
	// Pairing says who may approve peers' pairing requests: human (the
	// owner), agent (the owner or the agent) or off (docs/pairing.md).
	Pairing string `json:"pairing"`
	// MCP says whether the agent's MCP endpoint is on (docs/mcp.md); the
	// owner turns it off with PATCH {"mcp": false}.
	MCP bool `json:"mcp"`
	// MCPURL is the agent's MCP endpoint, set while it is served.
	MCPURL string `json:"mcp_url,omitempty"`
	// Communities are the communities the agent is in, sorted.
	Communities []string `json:"communities"`
	Endpoint    string   `json:"endpoint,omitempty"`
	// Upstream and UpstreamCardURL are a front's (docs/front.md).
	Upstream        string `json:"upstream,omitempty"`
	UpstreamCardURL string `json:"upstream_card_url,omitempty"`
	// Record is what a front keeps of its tasks: "task" or "none"
	// (pass-through).
	Record string `json:"record,omitempty"`
	// Connected is set for connector agents: whether the agent holds a
	// connection to an instance of the deployment now.
	Connected *bool `json:"connected,omitempty"`
	// ConnectedSince is when the connection that holds it was made, while
	// one does.
	ConnectedSince *time.Time `json:"connected_since,omitempty"`
	// PublishedCard is set, on GET /agents/{ref} only, for a connector
	// agent whose connect --forward published its server's card, which
	// the address serves (docs/front.md).
	PublishedCard *PublishedCard `json:"published_card,omitempty"`
	Address       string         `json:"address"`
	AgentCard     string         `json:"agent_card"`
	CreatedAt     time.Time      `json:"created_at"`
	UpdatedAt     time.Time      `json:"updated_at"`
	// AgentToken and WebhookSecret are set only in the answer that creates
	// them: they are shown once.
	AgentToken    string `json:"agent_token,omitempty"`
	WebhookSecret string `json:"webhook_secret,omitempty"`
}

// PublishedCard says which server's card a forwarding connector published
// for its agent, and when.
type PublishedCard struct {
	Target    string    `json:"target"`
	Name      string    `json:"name"`
	Skills    int       `json:"skills"`
	UpdatedAt time.Time `json:"updated_at"`
}

// AgentRequest is the body of POST /agents and PATCH /agents/{ref}. The
// pointers tell "absent" from "empty": absent fields take their default
// (POST) or keep their value (PATCH). Handle is required by POST; Handle
// and AccountID (operator only: create the agent for that account) are
// refused by PATCH.
type AgentRequest struct {
	Handle         *string           `json:"handle,omitempty"`
	Name           *string           `json:"name,omitempty"`
	Description    *string           `json:"description,omitempty"`
	Mode           *string           `json:"mode,omitempty"`
	Version        *string           `json:"version,omitempty"`
	Skills         *[]a2a.AgentSkill `json:"skills,omitempty"`
	ExtendedSkills *[]a2a.AgentSkill `json:"extended_skills,omitempty"`
	AcceptsTasks   *bool             `json:"accepts_tasks,omitempty"`
	Pairing        *string           `json:"pairing,omitempty"`
	MCP            *bool             `json:"mcp,omitempty"`
	Endpoint       *string           `json:"endpoint,omitempty"`
	// Domain gives the agent a domain, a host name whose DNS points at
	// the deployment (docs/agents.md, "Agent domains"); "" removes it.
	Domain *string `json:"domain,omitempty"`
	// Upstream is a front's upstream A2A endpoint (https), and
	// UpstreamCardURL where its card is, if not at the well-known paths.
	Upstream        *string `json:"upstream,omitempty"`
	UpstreamCardURL *string `json:"upstream_card_url,omitempty"`
	// Record is what a front keeps of its tasks: "task" (a durable record
	// of every task, the default) or "none" (pass-through, docs/front.md).
	Record    *string `json:"record,omitempty"`
	AccountID *string `json:"account_id,omitempty"`
}

// AgentDeleted is the answer of DELETE /agents/{ref}.
type AgentDeleted struct {
	Deleted bool   `json:"deleted"`
	Handle  string `json:"handle"`
	ID      string `json:"id"`
}

// AgentTokenRotation is the answer of POST /agents/{ref}/agent-token: the
// connector agent's new token, shown once.
type AgentTokenRotation struct {
	Agent      string `json:"agent"`
	AgentToken string `json:"agent_token"`
}

// WebhookSecretRotation is the answer of POST /agents/{ref}/webhook-secret:
// the webhook agent's new signing secret, shown once.
type WebhookSecretRotation struct {
	Agent         string `json:"agent"`
	WebhookSecret string `json:"webhook_secret"`
}

// Deliveries is the answer of GET /agents/{ref}/deliveries: the work on its
// way to an agent.
type Deliveries struct {
	Agent      string     `json:"agent"`
	Deliveries []Delivery `json:"deliveries"`
}

// Delivery is one delivery of a task or message to an agent.
type Delivery struct {
	ID        string    `json:"id"`
	TaskID    string    `json:"task_id"`
	Kind      string    `json:"kind"`
	State     string    `json:"state"`
	Attempts  int       `json:"attempts"`
	Deadline  time.Time `json:"deadline"`
	LastError string    `json:"last_error,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}
