package switchboard

import (
	"context"
	"errors"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// DeliveryKind says what a delivery carries to the agent.
type DeliveryKind string

// Delivery kinds.
const (
	DeliverTask    DeliveryKind = "task"    // the message that created a task
	DeliverMessage DeliveryKind = "message" // a follow-up message on a task
	DeliverCancel  DeliveryKind = "cancel"  // notice that a task was canceled
)

// DeliveryState is where a delivery stands.
type DeliveryState string

// Delivery states: queued → offered → acked, or failed. Offered means
// written to the agent's socket, or a webhook call in flight; acked means the
// agent confirmed it. An offer that is not acknowledged (the socket dropped,
// the acknowledgement did not come within the ack timeout) goes back to
// queued and is offered again: delivery is at least once, and agents
// de-duplicate by task and message id. An acknowledgement that comes after
// the offer went back to queued, but before it was offered again, still
// counts.
const (
	DeliveryQueued  DeliveryState = "queued"
	DeliveryOffered DeliveryState = "offered"
	DeliveryAcked   DeliveryState = "acked"
	DeliveryFailed  DeliveryState = "failed" // deadline passed, task finished meanwhile, or the agent refused
)

// Delivery is one piece of work on its way to an agent. It is written in
// the same transaction as the task change that caused it.
type Delivery struct {
	ID        string
	TaskID    a2a.TaskID
	AgentID   string
	Kind      DeliveryKind
	MessageID string // the message to deliver (kinds task and message)
	State     DeliveryState
	Attempts  int       // how many times it was offered
	Holder    string    // the connection (or dispatcher) holding the offer
	Deadline  time.Time // a queued or offered delivery fails past it
	// NextAttemptAt holds a delivery back until then (retry backoff).
	NextAttemptAt time.Time
	LastError     string
	CreatedAt     time.Time
	OfferedAt     *time.Time
	// TraceParent is the W3C trace context of the request that caused the
	// delivery, when the deployment traces (empty otherwise): the trace
	// goes on with the delivery on whichever instance offers it.
	TraceParent string
}

// DeliveryFilter selects deliveries. Nil and empty fields match everything.
type DeliveryFilter struct {
	TaskID  *a2a.TaskID
	AgentID *string
	States  []DeliveryState
}

// DeliveryStore keeps deliveries. New deliveries are written by
// TaskStore.CreateTask and ModifyTask (TaskChange.NewDeliveries), in the
// transaction of the task change.
type DeliveryStore interface {
	// ClaimDeliveries offers up to max of the agent's queued, due
	// deliveries to holder, oldest first, for lease, and returns them.
	// Deliveries of kind task stay queued while the agent, as stored now,
	// does not accept tasks. A follow-up or a cancel is offered only once
	// its task has been.
	ClaimDeliveries(ctx context.Context, agentID, holder string, max int, lease time.Duration) ([]*Delivery, error)

	// ClaimDueDeliveries offers up to max queued, due deliveries of agents
	// in the given mode, across agents, to holder for lease, in the order
	// they became due (a retry waits behind what became due before it). No
	// agent gets more than perAgent deliveries offered at once, counting the
	// offers already in flight, so that one slow agent cannot take every
	// dispatcher slot; claims racing on several instances may together pass
	// perAgent by a few. New tasks of agents that do not accept tasks stay
	// queued; a follow-up or a cancel is offered only once its task has been.
	ClaimDueDeliveries(ctx context.Context, mode DeliveryMode, holder string, max, perAgent int, lease time.Duration) ([]*Delivery, error)

	// AgentsWithDueWork returns those of agentIDs that have a delivery
	// queued and due now: the work an instance looks for, for the agents
	// connected to it, when no hint announced it.
	AgentsWithDueWork(ctx context.Context, agentIDs []string) ([]string, error)

	// AckDelivery records that the agent received the delivery that holder
	// offered it: the offer becomes acked. A late acknowledgement counts
	// too: if the offer went back to queued unacknowledged (its lease ended,
	// holder's connection closed) and was not offered to anyone since, it
	// becomes acked all the same, so it is neither offered again nor left
	// to expire while the agent works on it. It reports false (and no
	// error) otherwise: already acked, offered since by another holder (or
	// again by holder), queued again as lost work, or closed.
	AckDelivery(ctx context.Context, id, holder string) (bool, error)

	// ReleaseDeliveries returns the offered deliveries held by holders
	// (connection ids) to queued, due at once, and returns the agents they
	// are for, each once. They keep their deadline: an offer that was never
	// acknowledged is work the agent has not taken, and an agent that drops
	// its connection on every offer of a task must not keep the task
	// waiting forever.
	ReleaseDeliveries(ctx context.Context, holders []string) (agentIDs []string, err error)

	// RetryDelivery returns one offered delivery to queued, due at next,
	// recording why the attempt failed.
	RetryDelivery(ctx context.Context, id string, next time.Time, lastErr string) error

	// RequeueUnheld returns to queued the acked task and message deliveries
	// of the agent's unfinished tasks that are not in holding: work the
	// agent confirmed but no longer has (it restarted). The requeued work
	// fails past deadline, not its first one: the agent took it in time,
	// and losing it must not fail it on the next dropped offer.
	RequeueUnheld(ctx context.Context, agentID string, holding []a2a.TaskID, deadline time.Time) (int, error)

	// RequeueStaleOffers returns to queued the offers whose lease ended
	// before now without an acknowledgement, and returns their agents.
	RequeueStaleOffers(ctx context.Context, now time.Time) ([]string, error)

	// FindExpiredDeliveries returns up to max queued deliveries whose
	// deadline is before now. (An offered delivery is either acknowledged
	// or goes back to queued when its lease ends.)
	FindExpiredDeliveries(ctx context.Context, now time.Time, max int) ([]*Delivery, error)

	// FindDeliveries returns the deliveries that match f, oldest first.
	FindDeliveries(ctx context.Context, f DeliveryFilter) ([]*Delivery, error)
}

// Offer is a delivery ready to be sent: the A2A request the agent receives.
type Offer struct {
	Delivery *Delivery
	// Send is set for kinds task and message: the message, with its task and
	// context ids, and metadata saying who sent it.
	Send *a2a.SendMessageRequest
	// Cancel is set for kind cancel.
	Cancel *a2a.CancelTaskRequest
	// Task is the task as it stood when offered.
	Task *Task
}

// DirectOffers is how the instance that holds an agent's connection offers
// it a new task straight from the task's creation, instead of claiming it
// afterwards: the delivery is written already offered to that connection,
// in the transaction that creates the task, and the offer goes to the
// socket from the task in memory. That saves a write transaction and a read
// of the task for each task. The hub implements it (relay.Service.OfferDirectly); without one (or when
// the agent's connection is on another instance, or has no room) new tasks
// are queued and claimed.
type DirectOffers interface {
	// ReserveOffer takes room for one offer on the agent's connection on
	// this instance, if it has a connection with room, and returns the
	// holder its offers are marked with.
	ReserveOffer(agentID string) (holder string, ok bool)
	// SendOffer sends an offer, committed or of a task sent before it is
	// written (the relay then writes it as created when the connection
	// closes first), using up its reservation. It
	// reports false when the connection has gone (the reservation is then
	// gone too).
	SendOffer(o *Offer) bool
	// CancelOffer gives back a reservation that no offer used.
	CancelOffer(agentID, holder string)
}

// Deliverer calls an agent that is reached by a request per task (webhook
// mode) and returns its answer as an A2A event: a message, a task, or a
// status update.
type Deliverer interface {
	// Deliver offers o to the agent. An error means the attempt failed and
	// may be retried; an *Error with EINVALIDAGENTRESPONSE means the agent
	// answered, but not in a form that can be used; ErrAnswerRecorded
	// means the deliverer recorded the agent's answers itself, the
	// acknowledgement with the first (a front, whose upstream answers
	// with a stream of events).
	Deliver(ctx context.Context, agent *Agent, o *Offer) (a2a.Event, error)
}

// ErrAnswerRecorded is what a Deliverer returns when it recorded the
// acknowledgement of the offer and the agent's answers itself.
var ErrAnswerRecorded = errors.New("the deliverer recorded the answer")

// ErrTaskUnwritten is what recording the first answer to an offer returns
// when the offer's task, sent before it was written (a front's), could
// not be written with it: the caller was told why, nothing is retried,
// and the agent's work on the task, which no one will read, should be
// stopped.
var ErrTaskUnwritten = errors.New("the task could not be written with its first answer")

// Defaults of delivery timing (the relay's settings, the hub's too).
const (
	// DefaultDeliveryDeadline is how long a task waits for its agent to
	// connect (or its webhook to answer) before it fails.
	DefaultDeliveryDeadline = time.Hour
	// DefaultAckTimeout is how long an offer may stay unacknowledged before
	// it is offered again.
	DefaultAckTimeout = 30 * time.Second
)
