package switchboard

import (
	"context"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Outbound is a message one of our agents sent to another A2A agent (on
// this deployment or anywhere else), and what has been learnt since about
// the task it started there: the record behind `switchboard outbox`, `poll`
// and pushes received at the agent's address.
//
// A record is written before the message is sent, so that a push arriving
// before the sender heard back finds it (by its push token), and a failed
// send is recorded too.
type Outbound struct {
	ID       string
	AgentID  string          // our agent, the sender
	Target   string          // what the sender named: an alias, a URL or a handle
	Endpoint string          // the JSON-RPC URL the message went to
	Protocol ProtocolVersion // the version spoken with the target
	// TaskID and ContextID are the remote task's; TaskID is empty until the
	// target answered with a task (or never, when it answered with a
	// message).
	TaskID    a2a.TaskID
	ContextID string
	MessageID string // the id of the message we sent
	Text      string // the text we sent
	// State is the remote task's last known state; TaskStateUnspecified
	// until the target answered.
	State a2a.TaskState
	// Task is the remote task as last seen (1.0 model), or nil.
	Task *a2a.Task
	// Reply is the target's answer when it answered with a message rather
	// than a task.
	Reply *a2a.Message
	// Error says why the send failed, when it did.
	Error string
	// Updates are the last MaxOutboundUpdates changes seen, oldest first.
	Updates []OutboundUpdate
	// PushTokenHash is HashToken of the token the target must present with
	// pushes about this task; empty when no push was asked for. The token
	// itself is never stored.
	PushTokenHash string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// OutboundUpdate is one change seen on a remote task.
type OutboundUpdate struct {
	At     time.Time     `json:"at"`
	Source string        `json:"source"` // OutboundFromSend, OutboundFromPoll or OutboundFromPush
	State  a2a.TaskState `json:"state,omitempty"`
	// Text is the text the change carried (status message, artifacts, or a
	// message): written by the remote agent, so untrusted.
	Text string `json:"text,omitempty"`
}

// Where an outbound update came from.
const (
	OutboundFromSend = "send" // the answer to the send itself
	OutboundFromPoll = "poll" // a GetTask made by the sender
	OutboundFromPush = "push" // a push notification from the target
)

// MaxOutboundUpdates is how many updates an outbound record keeps.
const MaxOutboundUpdates = 20

// MaxOutboundText bounds the text of one update as kept.
const MaxOutboundText = 16 << 10

// OutboundFilter selects outbound records. Empty fields match everything.
type OutboundFilter struct {
	AgentID   string
	ContextID string
	TaskID    a2a.TaskID
	// Pending selects records whose target has not named its task yet.
	Pending bool
	// PushTokenHash selects records with this push token hash.
	PushTokenHash string
	// OldestFirst orders by creation time; default newest update first.
	OldestFirst bool
	Limit       int // 0: no limit
}

// OutboundStore keeps outbound records.
type OutboundStore interface {
	// CreateOutbound stores o; it returns ENOTFOUND if its agent does not
	// exist.
	CreateOutbound(ctx context.Context, o *Outbound) error

	// FindOutboundByID returns one record, or ENOTFOUND.
	FindOutboundByID(ctx context.Context, id string) (*Outbound, error)

	// FindOutbounds returns the records that match f.
	FindOutbounds(ctx context.Context, f OutboundFilter) ([]*Outbound, error)

	// ModifyOutbound reads the record, lets fn change it and writes it back,
	// in one transaction that no other change to the record interleaves
	// with. A wake request fn returns is queued in the same transaction, as
	// WakeStore.EnqueueWake does (nothing if the agent has no wake
	// configuration); wakeQueued reports whether it was. It returns the
	// record as stored, ENOTFOUND, or fn's error (and then writes nothing).
	ModifyOutbound(ctx context.Context, id string, fn func(*Outbound) (*WakeRequest, error)) (o *Outbound, wakeQueued bool, err error)
}
