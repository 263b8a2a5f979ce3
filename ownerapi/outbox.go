package ownerapi

import (
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Outbound is a message an agent sent to another agent, with what is known
// of the remote task: the answer of POST /agents/{ref}/outbox, GET and
// PATCH /outbox/{id}. Text the target wrote (task, reply, updates) is
// untrusted. State is the remote task's short state, "sent" before the
// target answered.
type Outbound struct {
	ID        string `json:"id"`
	AgentID   string `json:"agent_id"`
	Agent     string `json:"agent"`
	Target    string `json:"target"`
	Endpoint  string `json:"endpoint"`
	Protocol  string `json:"protocol"`
	TaskID    string `json:"task_id"`
	ContextID string `json:"context_id"`
	MessageID string `json:"message_id"`
	State     string `json:"state"`
	Text      string `json:"text"`
	Error     string `json:"error,omitempty"`
	// Push says whether the target was asked to push updates; PushURL is
	// where they go.
	Push    bool             `json:"push"`
	PushURL string           `json:"push_url,omitempty"`
	Task    *a2a.Task        `json:"task,omitempty"`
	Reply   *a2a.Message     `json:"reply,omitempty"`
	Updates []OutboundUpdate `json:"updates"`
	// CreatedAt and UpdatedAt are when the record was made and last changed.
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// OutboundUpdate is one change seen on a remote task, oldest first in
// Outbound.Updates. Source is "send", "poll" or "push"; Text, written by
// the remote agent, is untrusted.
type OutboundUpdate struct {
	At     time.Time `json:"at"`
	Source string    `json:"source"`
	State  string    `json:"state,omitempty"`
	Text   string    `json:"text,omitempty"`
}

// Outbox is the answer of GET /agents/{ref}/outbox: an agent's outbound
// records, most recently updated first.
type Outbox struct {
	Agent  string     `json:"agent"`
	Outbox []Outbound `json:"outbox"`
}

// OutboundCreate is the body of POST /agents/{ref}/outbox: a message the
// agent is about to send. Protocol is "1.0" or "0.3". With a PushToken the
// answer carries the push_url to give the target; only the token's hash is
// kept.
type OutboundCreate struct {
	Target    string `json:"target"`
	Endpoint  string `json:"endpoint"`
	Protocol  string `json:"protocol"`
	ContextID string `json:"context_id"`
	TaskID    string `json:"task_id"`
	MessageID string `json:"message_id"`
	Text      string `json:"text"`
	PushToken string `json:"push_token"`
}

// OutboundResult is the body of PATCH /outbox/{id}: what the sender learnt
// about the remote task. Source is "send" or "poll"; Task and Reply are in
// the A2A 1.0 JSON shape; Error is why a send failed.
type OutboundResult struct {
	Source string       `json:"source"`
	Task   *a2a.Task    `json:"task,omitempty"`
	Reply  *a2a.Message `json:"reply,omitempty"`
	Error  string       `json:"error,omitempty"`
}

// Conversation is the answer of GET /agents/{ref}/history/{contextId}: a
// conversation of an agent in both directions, oldest first.
type Conversation struct {
	Agent     string              `json:"agent"`
	ContextID string              `json:"context_id"`
	Entries   []ConversationEntry `json:"entries"`
}

// ConversationEntry is one message of a conversation as one of our agents
// saw it.
type ConversationEntry struct {
	At time.Time `json:"at"`
	// Direction is "in" (to our agent) or "out" (from it).
	Direction string `json:"direction"`
	// Kind says what the entry is:
	//   "message": a peer's message to our agent (in; untrusted)
	//   "reply":   our agent's answer to it (out)
	//   "sent":    a message our agent sent to another agent (out)
	//   "answer":  that agent's answer (in; untrusted)
	Kind   string `json:"kind"`
	TaskID string `json:"task_id"`
	// Peer is the peer's label (inbound) or the target (outbound).
	Peer  string `json:"peer"`
	State string `json:"state,omitempty"`
	Text  string `json:"text"`
	// Untrusted marks text another agent wrote: data, never instructions.
	Untrusted bool `json:"untrusted"`
	// OutboundID names the outbound record of "sent" and "answer" entries.
	OutboundID string `json:"outbound_id,omitempty"`
}
