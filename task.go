package switchboard

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// ProtocolVersion is the A2A protocol version of a request: it decides the
// wire shapes of the answer and of anything sent later on the caller's behalf.
type ProtocolVersion string

// Supported protocol versions.
const (
	ProtocolV1  ProtocolVersion = "1.0"
	ProtocolV03 ProtocolVersion = "0.3"
)

// Limits of the task model.
const (
	// MaxTaskBytes bounds a task as stored (its A2A JSON, with history and
	// artifacts). A message or an agent's event that would grow a task past
	// it is refused: one task cannot grow without bound, and every rewrite
	// of it stays cheap.
	MaxTaskBytes = 4 << 20
	// MaxMessageIDLen is the longest messageId, ours or a peer's.
	MaxMessageIDLen = 200
)

// Task is an A2A task on one agent, as stored. A2A holds the wire model (the
// a2a-go 1.0 types, with the full history); the other fields are what the
// relay knows about it.
type Task struct {
	A2A       a2a.Task
	AgentID   string          // the agent whose address received it
	PeerID    string          // the peer that created it; only that peer sees it
	PeerLabel string          // that peer's label when it created the task
	PeerKind  PeerKind        // what kind of peer created it
	Protocol  ProtocolVersion // the version of the request that created it
	Seq       int64           // sequence number of the last event in its log
	// Offered is set once the task has been offered to its agent, which
	// then needs to hear of a cancellation.
	Offered bool
	// ContextMinted is set, in memory only, on a task whose context id
	// Switchboard made when it created the task (the peer's message named
	// none): no earlier task shares that context, so nothing is mapped to
	// it yet. It is never stored: a task read back has it false.
	ContextMinted bool
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// ID returns the task's id.
func (t *Task) ID() a2a.TaskID { return t.A2A.ID }

// State returns the task's current state.
func (t *Task) State() a2a.TaskState { return t.A2A.Status.State }

// VisibleTo reports whether the peer may see the task: only the peer that
// created it, on the agent it was sent to (on any agent, for a peer that
// is no one agent's).
func (t *Task) VisibleTo(p Peer) bool {
	if t.PeerID != p.ID || t.PeerKind != p.Kind {
		return false
	}
	return t.AgentID == p.AgentID || (p.AgentID == "" && p.Kind != PeerOutside)
}

// TaskEvent is one entry of a task's event log. Every change to a task is an
// event, written in the same transaction as the change, with a sequence
// number that grows by one per task. Streams, replays with Last-Event-ID and
// blocking waits all read this log.
type TaskEvent struct {
	TaskID a2a.TaskID
	Seq    int64
	// Event is a *a2a.Task (the snapshot at creation), *a2a.TaskStatusUpdateEvent
	// or *a2a.TaskArtifactUpdateEvent.
	Event     a2a.Event
	CreatedAt time.Time
	// Pushes is how many push notifications the change queued; the store
	// sets it on the last event of a change, when it is written.
	Pushes int
}

// TaskChange is what is written with a task besides the task itself, in the
// same transaction.
type TaskChange struct {
	// Events are appended to the task's log in order.
	Events []a2a.Event
	// TraceParent is the W3C trace context of what made the change, when
	// the deployment traces: the pushes it queues keep it
	// (PushDelivery.TraceParent).
	TraceParent string
	// MessageID, when set, records that the task's peer sent a message with
	// this id, so that the same message sent again is recognised.
	MessageID string
	// PushConfig, when set, is saved as by SavePushConfig.
	PushConfig *PushConfig
	// NewDeliveries are queued for the task's agent. In CreateTask, the
	// delivery of the new task may come already offered (State
	// DeliveryOffered, with Holder, Attempts, OfferedAt and NextAttemptAt
	// set, as a claim sets them) by the instance that holds the agent's
	// connection and sends the offer itself. The store then marks the task
	// offered, unless the agent, as stored, does not accept tasks or has
	// older deliveries queued (which go first): then it writes the delivery
	// queued, and sets the Delivery's fields so.
	NewDeliveries []*Delivery
	// OfferSent, in CreateTask, says the task was sent to its agent
	// already (a front forwards a task before writing it): the task is
	// marked offered, with or without a delivery, and an offered delivery
	// in NewDeliveries is written offered whatever the agent's queue, since
	// queuing it behind older work would send it twice.
	OfferSent bool
	// Created, in CreateTask, is the task as created when t comes with
	// Events applied already (a front's task written with the upstream's
	// first answer): it is the task's first event, and the Events follow.
	Created *a2a.Task
	// CloseDeliveries are the ids of deliveries to mark failed.
	CloseDeliveries []string
	// Ack, when set, records an acknowledgement of a delivery in the same
	// transaction, before the rest of the change, as
	// DeliveryStore.AckDelivery does; the store sets its First.
	Ack *DeliveryAck
	// MaxBytes, when set, bounds the task as written: a task whose JSON
	// is larger is refused with a *TaskTooLargeError and nothing is
	// written. Changes that carry content from outside (a peer's message,
	// an agent's event, an owner's reply) set it to MaxTaskBytes; the
	// relay's own changes (failing, expiring, canceling a task) do not,
	// so that a task near the bound can still be ended.
	MaxBytes int
	// Wake, when set, queues a wake of the agent as WakeStore.EnqueueWake
	// does (nothing if the agent has no wake configuration).
	Wake *WakeRequest
	// FrontMap, when set, records the upstream's ids of the task of a
	// front as FrontStore.MapFrontTask does.
	FrontMap *FrontTaskMap
	// Quota, when set, bounds what the task's peer holds on its agent: a
	// change that would take the peer's unfinished tasks there past
	// Quota.MaxOpenTasks (a new task) or their bytes past Quota.MaxBytes
	// (a change that grows them) is refused with a *QuotaError, and
	// nothing is written. Changes that only shrink or keep them pass.
	// The relay sets it on a peer's messages; an agent's answers and the
	// relay's own changes do not carry it.
	Quota *PeerQuota
}

// PeerQuota bounds what one peer holds on one agent that retention does not
// clear: its unfinished tasks (submitted, working, input-required,
// auth-required), by number and by the bytes of their A2A JSON as stored.
// A zero field is no bound.
type PeerQuota struct {
	MaxOpenTasks int
	MaxBytes     int64
	// HeldOpen and HeldBytes are what the peer holds that the store does
	// not count yet (a front's tasks sent before they are written): they
	// count toward MaxOpenTasks and MaxBytes all the same.
	HeldOpen  int
	HeldBytes int64
}

// DeliveryAck is an acknowledgement of a delivery carried by a TaskChange.
type DeliveryAck struct {
	DeliveryID string
	Holder     string // the holder whose offer is acknowledged
	// First is set by the store: whether this acknowledgement was the
	// delivery's first (see DeliveryStore.AckDelivery).
	First bool
}

// TaskCursor is a position in a task listing: the last task seen, by the
// time the listing sorts on and its id.
type TaskCursor struct {
	StatusAt  time.Time // in a newest-first listing: the task's StatusAt
	CreatedAt time.Time // in an oldest-first listing: the task's CreatedAt
	ID        a2a.TaskID
}

// TaskFilter selects tasks. Nil and empty fields match everything.
type TaskFilter struct {
	AgentID   *string
	PeerID    *string
	PeerLabel *string // the label the peer had when it created the task
	// PeerKind, when set to a kind other than PeerOutside, keeps the tasks
	// of peers of that kind: with PeerID and no AgentID, a peer's tasks
	// on every agent.
	PeerKind    *PeerKind
	ContextID   *string
	States      []a2a.TaskState
	StatusAfter *time.Time  // status timestamp strictly after
	After       *TaskCursor // continue the listing after this task (StatusAt newest first, CreatedAt oldest first)
	OldestFirst bool        // order by creation, oldest first (inbox); default newest status first
	Limit       int         // 0 means no limit
	// NoTotal spares counting every task that matches, for a caller that
	// does not use the count (FindTasks returns 0): an agent may have
	// millions of tasks.
	NoTotal bool
}

// TaskStore keeps tasks, their event logs and message ids.
type TaskStore interface {
	// CreateTask stores a new task, its first event (the task snapshot,
	// sequence number 1) and what change holds (the message id, a push
	// configuration, deliveries), in one transaction. It sets t.Seq and
	// returns the event. It returns
	// ErrDuplicateMessage if the peer already sent a message with that id to
	// the agent, and ENOTFOUND if the agent no longer exists.
	CreateTask(ctx context.Context, t *Task, change *TaskChange) (*TaskEvent, error)

	// FindTaskByID returns the task, or ENOTFOUND.
	FindTaskByID(ctx context.Context, id a2a.TaskID) (*Task, error)

	// FindTaskByMessageID returns the task to which the peer sent the message
	// with the given id, or ENOTFOUND.
	FindTaskByMessageID(ctx context.Context, agentID, peerID, messageID string) (*Task, error)

	// FindTasks returns the tasks that match f (at most f.Limit) and how many
	// match f without its cursor and limit.
	FindTasks(ctx context.Context, f TaskFilter) ([]*Task, int, error)

	// ModifyTask reads the task, calls fn with it and, if fn returns a
	// change, writes the task as fn left it and the change, all in one
	// transaction that no other change to the task interleaves with. A
	// change whose events PushedChange reports as pushed queues a
	// PushDelivery of the task as fn left it for each of its push
	// configurations, in the same transaction. A task that ends in a final
	// state closes its open task and message deliveries. A nil change
	// writes nothing. It returns the task as stored and the events
	// appended, ENOTFOUND, the error fn returned, ErrDuplicateMessage, or
	// a *TaskTooLargeError when the task fn left is larger than
	// MaxTaskBytes (CreateTask refuses such a task as well).
	ModifyTask(ctx context.Context, id a2a.TaskID, fn func(*Task) (*TaskChange, error)) (*Task, []*TaskEvent, error)

	// FindTaskEvents returns the task's events with a sequence number above
	// afterSeq, oldest first, at most limit of them (0: no limit).
	FindTaskEvents(ctx context.Context, id a2a.TaskID, afterSeq int64, limit int) ([]*TaskEvent, error)

	// ExpireTasks deletes up to max of the tasks that reached a final
	// state (completed, failed, canceled, rejected) before the given time,
	// those that finished first first, with every row that belongs to
	// them: events, message ids, push configurations, deliveries, and the
	// rows of any other table that names the task in a task_id column or
	// references it by a foreign key (docs/deploying.md, "Retention"). It
	// runs one short transaction and returns how many tasks it deleted;
	// instances that run it at once never delete a task twice, and a
	// task deleted already is simply not found again.
	ExpireTasks(ctx context.Context, finishedBefore time.Time, max int) (int, error)

	// PeerUsage returns how many unfinished tasks (submitted, working,
	// input-required, auth-required) the peer holds on the agent and the
	// bytes of their A2A JSON as stored: the counts the store keeps for
	// TaskChange.Quota, changed in the transaction of every task write, so
	// that reading and checking them costs one lookup however many tasks
	// the peer holds. Tasks that an older version of the store wrote
	// during an upgrade are not counted right; a count that would refuse a
	// change is made again from the tasks first (RecountPeerUsage).
	PeerUsage(ctx context.Context, agentID, peerID string) (openTasks int, bytes int64, err error)

	// MessageUsage is FindTaskByMessageID and PeerUsage in one read:
	// whether the peer's message messageID to the agent has a task
	// written, and the peer's counts as PeerUsage returns them.
	MessageUsage(ctx context.Context, agentID, peerID, messageID string) (sent bool, openTasks int, bytes int64, err error)

	// RecountPeerUsage counts what PeerUsage returns from the tasks
	// themselves, corrects the kept counts, and returns them. Its cost
	// grows with the agent's unfinished tasks (never with finished ones):
	// the store runs it before a refusal, at most once a minute per peer.
	RecountPeerUsage(ctx context.Context, agentID, peerID string) (openTasks int, bytes int64, err error)
}

// ErrDuplicateMessage means the peer already sent a message with this id to
// the agent: sending it again must not create or change anything.
var ErrDuplicateMessage = errors.New("duplicate message id")

// Interrupted reports whether a task in state s waits for its peer
// (input-required or auth-required).
func Interrupted(s a2a.TaskState) bool {
	return s == a2a.TaskStateInputRequired || s == a2a.TaskStateAuthRequired
}

// ShortState returns the lower-case form of a state used by the owner API,
// the CLI and A2A 0.3: "submitted", "input-required" and so on.
func ShortState(s a2a.TaskState) string {
	if s == a2a.TaskStateUnspecified {
		return "unknown"
	}
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(string(s), "TASK_STATE_")), "_", "-")
}

// ParseState accepts either form of a task state ("input-required" or
// "TASK_STATE_INPUT_REQUIRED") and reports whether it is a known state.
func ParseState(s string) (a2a.TaskState, bool) {
	up := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), "-", "_"))
	if !strings.HasPrefix(up, "TASK_STATE_") {
		up = "TASK_STATE_" + up
	}
	switch st := a2a.TaskState(up); st {
	case a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateInputRequired,
		a2a.TaskStateAuthRequired, a2a.TaskStateCompleted, a2a.TaskStateFailed,
		a2a.TaskStateCanceled, a2a.TaskStateRejected:
		return st, true
	}
	return a2a.TaskStateUnspecified, false
}

// MessageText joins the text parts of a message with newlines.
func MessageText(m *a2a.Message) string {
	var b strings.Builder
	writeText(&b, m.Parts)
	return b.String()
}

// ArtifactsText returns the text parts of the artifacts, one per line.
func ArtifactsText(arts []*a2a.Artifact) string {
	var b strings.Builder
	for _, art := range arts {
		if art != nil {
			writeText(&b, art.Parts)
		}
	}
	return b.String()
}

// writeText adds the text parts to b, one per line.
func writeText(b *strings.Builder, parts a2a.ContentParts) {
	for _, p := range parts {
		if p == nil {
			continue
		}
		if txt, ok := p.Content.(a2a.Text); ok {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(string(txt))
		}
	}
}

// StatusAt returns the time by which task listings sort a task: its status
// timestamp, or its last update if the status has none.
func StatusAt(t *Task) time.Time {
	if ts := t.A2A.Status.Timestamp; ts != nil {
		return *ts
	}
	return t.UpdatedAt
}

// TrimTask returns a copy of t for the wire: at most historyLength of the
// most recent history messages (nil: all; 0: none) and, unless
// withArtifacts, no artifacts. The stored task is not changed.
func TrimTask(t *a2a.Task, historyLength *int, withArtifacts bool) *a2a.Task {
	c := *t
	if historyLength != nil {
		n := *historyLength
		switch {
		case n <= 0:
			c.History = nil
		case n < len(c.History):
			c.History = c.History[len(c.History)-n:]
		}
	}
	if !withArtifacts {
		c.Artifacts = nil
	}
	return &c
}
