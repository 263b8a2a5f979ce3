package switchboard

import (
	"context"
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// PushConfig is a push notification configuration a peer registered for a
// task. Storing them is part of the task protocol; sending is done by the
// push sender, which reads them from here.
type PushConfig struct {
	Config    a2a.PushConfig  // TaskID and ID are always set
	Protocol  ProtocolVersion // the version it was registered with: the shape pushes take
	CreatedAt time.Time
}

// PushConfigStore keeps push notification configurations.
type PushConfigStore interface {
	// SavePushConfig stores c, replacing a configuration with the same task
	// and id. It returns EINVALID if the task already holds
	// MaxPushConfigsPerTask other configurations.
	SavePushConfig(ctx context.Context, c *PushConfig) error

	// FindPushConfig returns one configuration, or ENOTFOUND.
	FindPushConfig(ctx context.Context, taskID a2a.TaskID, id string) (*PushConfig, error)

	// FindPushConfigs returns a task's configurations, oldest first.
	FindPushConfigs(ctx context.Context, taskID a2a.TaskID) ([]*PushConfig, error)

	// DeletePushConfig removes one configuration and cancels its pushes not
	// yet sent, in one transaction. Removing one that does not exist is not
	// an error.
	DeletePushConfig(ctx context.Context, taskID a2a.TaskID, id string) error
}

// MaxPushConfigsPerTask bounds how many push configurations a task holds.
const MaxPushConfigsPerTask = 10

// PushState is where a push notification stands.
type PushState string

// Push states: queued → sending → sent, or back to queued for a retry, or
// failed once the sender gives up; canceled when its configuration is
// deleted before it was sent.
const (
	PushQueued   PushState = "queued"
	PushSending  PushState = "sending" // claimed by a sender; NextAttemptAt is the end of its lease
	PushSent     PushState = "sent"
	PushFailed   PushState = "failed" // given up: a permanent refusal, too many attempts, or too old
	PushCanceled PushState = "canceled"
)

// PushDelivery is one push notification on its way to a peer: the task as
// it stood after a change, for one push configuration of the task. It is
// written in the transaction of the change (TaskStore.CreateTask and
// ModifyTask write one per configuration when PushedChange says so).
type PushDelivery struct {
	ID       string
	TaskID   a2a.TaskID
	ConfigID string
	// Seq is the sequence number of the last event of the change it reports;
	// a configuration's pushes are sent in this order.
	Seq int64
	// TaskState is the state of the task it reports.
	TaskState a2a.TaskState
	State     PushState
	Attempts  int // how many times it was claimed
	// NextAttemptAt is when a queued push is due; for a sending push, the
	// end of its lease.
	NextAttemptAt time.Time
	LastError     string
	LastStatus    int // HTTP status of the last answer; 0 if none came
	CreatedAt     time.Time
	DoneAt        *time.Time // when it was sent, given up or canceled
	// TraceParent is the W3C trace context of the change it reports, when
	// the deployment traces: its request carries it.
	TraceParent string

	// Task and Config are set by PushStore.ClaimPushes only: the task as it
	// stood, and the configuration as stored now.
	Task   *a2a.Task
	Config *PushConfig
}

// PushLimits say when PushStore.ClaimPushes gives up a push whose sender
// stopped mid-attempt, as the sender gives up a failed attempt
// (push.SendConfig): once it has had MaxAttempts attempts, or once older
// than MaxAge (since its change). Zero values set no limit.
type PushLimits struct {
	MaxAttempts int
	MaxAge      time.Duration
}

// Exceeded reports why a push that has had attempts attempts and was
// created at created is past the limits at now, or "" if it is not.
func (l PushLimits) Exceeded(attempts int, created, now time.Time) string {
	switch {
	case l.MaxAttempts > 0 && attempts >= l.MaxAttempts:
		return fmt.Sprintf("gave up after %d attempts", attempts)
	case l.MaxAge > 0 && now.Sub(created) >= l.MaxAge:
		return fmt.Sprintf("gave up: older than %s", l.MaxAge)
	}
	return ""
}

// PushAttempt is one attempt to send a push notification, as the owner
// sees it.
type PushAttempt struct {
	PushID     string
	At         time.Time
	StatusCode int    // HTTP status of the answer; 0 if none came
	Error      string // why it failed; "" when it was delivered
	// NextAttemptAt is when the push is tried again; nil when it is not
	// (delivered, or given up).
	NextAttemptAt *time.Time
}

// PushStore keeps push notifications and their attempts. New ones are
// written by TaskStore.CreateTask and ModifyTask, in the transaction of the
// task change; PushConfigStore.DeletePushConfig cancels the unsent ones of
// the configuration it deletes.
type PushStore interface {
	// ClaimPushes hands up to max due pushes to holder for lease, in the
	// order they became due, and returns them with their task snapshot and
	// configuration. A push is due when it is queued and its time has come,
	// or sending and its lease ended (its sender stopped; the lost attempt is
	// recorded as interrupted). Only the earliest unsent push of each
	// configuration is handed out: a configuration's pushes go one after the
	// other, in the order of the task's changes. Pushes whose configuration
	// no longer exists are not handed out. A push whose lease ended is given
	// up instead (state PushFailed, its interrupted attempt saying why) once
	// past limits: the interrupted attempt counts, so that a push whose
	// sending stops its sender each time is not claimed for ever.
	ClaimPushes(ctx context.Context, holder string, now time.Time, max int, lease time.Duration, limits PushLimits) ([]*PushDelivery, error)

	// RecordPushAttempt records the outcome of an attempt of holder: the
	// attempt itself, and the push's new state: PushSent, PushFailed, or
	// PushQueued to retry at a.NextAttemptAt. It reports whether holder
	// still held the push (the state is changed only then; the attempt is
	// recorded either way).
	RecordPushAttempt(ctx context.Context, id, holder string, a *PushAttempt, state PushState) (bool, error)

	// FindPushes returns a task's pushes, oldest first, without their task
	// snapshot.
	FindPushes(ctx context.Context, taskID a2a.TaskID) ([]*PushDelivery, error)

	// FindPushAttempts returns the attempts of a task's pushes, oldest first.
	FindPushAttempts(ctx context.Context, taskID a2a.TaskID) ([]*PushAttempt, error)
}

// PushedChange reports whether a task change that appends events is pushed
// to the task's push configurations: when it holds a status update to any
// state but submitted. The submitted state is the peer's own doing (a new
// task, or its follow-up message), answered in the response to its request,
// and artifact updates alone are not pushed: every push carries the whole
// task, so the artifacts reach the peer with the next status change.
func PushedChange(events []a2a.Event) bool {
	for _, e := range events {
		if st, ok := e.(*a2a.TaskStatusUpdateEvent); ok &&
			st.Status.State != a2a.TaskStateSubmitted && st.Status.State != a2a.TaskStateUnspecified {
			return true
		}
	}
	return false
}
