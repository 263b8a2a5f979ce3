package ownerapi

import (
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Community is a community: an item of GET /communities and the answer of
// PUT /communities/{name}. Address is its A2A address ({base}/c/{name}),
// AgentCard its card.
type Community struct {
	Name      string    `json:"name"`
	Closed    bool      `json:"closed"`
	Members   int       `json:"members"`
	Address   string    `json:"address"`
	AgentCard string    `json:"agent_card"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// CommunitySettings is the body of PUT /communities/{name} (operator
// only). Absent fields keep their value (a new community is open).
type CommunitySettings struct {
	Closed *bool `json:"closed,omitempty"`
}

// Directory is the answer of GET /directory: the agents the caller can
// see, by handle. NextAfter, when set, continues the listing
// (?after=NextAfter).
type Directory struct {
	Agents    []DirectoryEntry `json:"agents"`
	NextAfter string           `json:"next_after,omitempty"`
}

// DirectoryEntry is an agent as a directory shows it. Communities are
// those the caller shares with it (all of them, for the operator). Live
// says whether it can take work now: its connector session was renewed
// within the last heartbeat interval on some instance, or its webhook
// endpoint has no failed delivery waiting for a retry.
type DirectoryEntry struct {
	Handle      string           `json:"handle"`
	Name        string           `json:"name"`
	Description string           `json:"description"`
	Skills      []a2a.AgentSkill `json:"skills"`
	Communities []string         `json:"communities"`
	Address     string           `json:"address"`
	CardURL     string           `json:"card_url"`
	Live        bool             `json:"live"`
	// Wakeable: the agent sleeps and can be woken (an inbox agent with a
	// working wake); wake_sleepers lets discovery choose it.
	Wakeable     bool `json:"wakeable"`
	AcceptsTasks bool `json:"accepts_tasks"`
	Approved     bool `json:"approved"`
}

// NetworkTask is the body of POST /tasks with an agent token: work the
// agent sends to another agent of the network, by name (To) or by
// discovery (Community and Skill). The message is TaskDescription and
// Payload.Message as text parts (one, when they are equal or one is
// empty). MessageID makes a retried request harmless; TaskID continues a
// task the agent sent (one waiting for input); ContextID continues a
// conversation. Blocking waits for the receiver's answer, at most
// TimeoutSeconds (default 60, at most 600).
type NetworkTask struct {
	// Agent, with an owner token, is the owner's agent that sends (its
	// handle or id); with an agent token it may only name that agent.
	Agent           string         `json:"agent,omitempty"`
	To              string         `json:"to,omitempty"`
	Community       string         `json:"community,omitempty"`
	Skill           string         `json:"skill,omitempty"`
	TaskDescription string         `json:"task_description,omitempty"`
	Payload         NetworkPayload `json:"payload"`
	Blocking        bool           `json:"blocking,omitempty"`
	TimeoutSeconds  int            `json:"timeout_seconds,omitempty"`
	MessageID       string         `json:"message_id,omitempty"`
	TaskID          string         `json:"task_id,omitempty"`
	ContextID       string         `json:"context_id,omitempty"`
	// WakeSleepers lets discovery, when no eligible agent is live, choose
	// an inbox agent that can be woken (docs/network.md, "Sleeping
	// agents"): the task waits in its inbox and its wake goes out.
	WakeSleepers bool `json:"wake_sleepers,omitempty"`
}

// NetworkPayload is the payload of a NetworkTask.
type NetworkPayload struct {
	Message string `json:"message"`
}

// NetworkTaskAccepted is the answer (202) of a POST /tasks that does not
// block: the task and the handle of the agent it went to. Follow it with
// GET /tasks/{id} and the same agent token.
type NetworkTaskAccepted struct {
	TaskID string `json:"task_id"`
	Agent  string `json:"agent"`
}

// NetworkTaskResult is the answer of a blocking POST /tasks, in the shape
// of the original network: Status is the task's state ("completed",
// "failed", "input-required"…; 200), or the state it still has when the
// wait ended first (202); Result is the text of the receiver's answer
// (its artifacts, else its last message). Agent is the receiver's handle.
type NetworkTaskResult struct {
	Status string `json:"status"`
	Agent  string `json:"agent"`
	Result string `json:"result"`
	TaskID string `json:"task_id"`
}
