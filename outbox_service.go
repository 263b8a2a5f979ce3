package switchboard

import (
	"context"
	"crypto/subtle"
	"net/url"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Limits on outbound records.
const (
	MaxOutboundTargetLen = 2048 // characters of a target or endpoint
	MaxContextIDLen      = 200  // characters of a contextId we record
)

// OutboxService keeps the record of what our agents send to other agents
// and of the answers that come back: the CLI records each send and each
// poll, and pushes received at an agent's address update the record.
type OutboxService struct {
	outbox OutboundStore
	tasks  TaskStore

	// Now returns the current time; tests may replace it.
	Now func() time.Time

	// Bus, if set, is notified on WakeSubject when a push queued an
	// outbound_update wake, so that a wake sender claims it without waiting
	// for its poll. The wake itself is queued in the transaction that
	// records the push (ReceivePush). Set it before the service is used.
	Bus Bus
}

// NewOutboxService returns an OutboxService over the given stores.
func NewOutboxService(outbox OutboundStore, tasks TaskStore) *OutboxService {
	return &OutboxService{outbox: outbox, tasks: tasks, Now: time.Now}
}

// Record stores a new outbound record for a message about to be sent. With
// a push token, only its hash is kept: pushes must present the token.
func (s *OutboxService) Record(ctx context.Context, o *Outbound, pushToken string) error {
	if err := validateOutbound(o); err != nil {
		return err
	}
	if pushToken != "" {
		if len(pushToken) < 16 || len(pushToken) > 512 {
			return Errorf(EINVALID, "push token must be 16 to 512 characters")
		}
		o.PushTokenHash = HashToken(pushToken)
	}
	now := s.Now().UTC()
	o.ID = NewID()
	o.CreatedAt, o.UpdatedAt = now, now
	o.Updates = nil
	if len(o.Text) > MaxOutboundText {
		o.Text = truncateUTF8(o.Text, MaxOutboundText) + "…"
	}
	return s.outbox.CreateOutbound(ctx, o)
}

func validateOutbound(o *Outbound) error {
	switch {
	case o.AgentID == "":
		return Errorf(EINVALID, "agent is required")
	case o.Target == "" || len(o.Target) > MaxOutboundTargetLen:
		return Errorf(EINVALID, "target is required (at most %d characters)", MaxOutboundTargetLen)
	case len(o.Endpoint) > MaxOutboundTargetLen:
		return Errorf(EINVALID, "endpoint is longer than %d characters", MaxOutboundTargetLen)
	case o.Protocol != ProtocolV1 && o.Protocol != ProtocolV03:
		return Errorf(EINVALID, "protocol must be 1.0 or 0.3")
	case len(o.ContextID) > MaxContextIDLen || len(o.TaskID) > MaxContextIDLen:
		return Errorf(EINVALID, "contextId and taskId are at most %d characters", MaxContextIDLen)
	case len(o.MessageID) > MaxMessageIDLen:
		return Errorf(EINVALID, "messageId is at most %d characters", MaxMessageIDLen)
	case !ValidRemoteID(o.Target),
		o.ContextID != "" && !ValidRemoteID(o.ContextID),
		o.TaskID != "" && !ValidRemoteID(string(o.TaskID)):
		return Errorf(EINVALID, "target, contextId and taskId must be printable text")
	}
	u, err := url.Parse(o.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return Errorf(EINVALID, "endpoint must be an http(s) URL without credentials")
	}
	return nil
}

// OutboundResult is what the sender learnt about a remote task: the task,
// or a message that answered instead of a task, or why the call failed.
type OutboundResult struct {
	Source string // OutboundFromSend or OutboundFromPoll
	Task   *a2a.Task
	Reply  *a2a.Message
	Error  string
}

// Update records what the sender learnt (from the send itself or a poll).
// A task must be the record's task, once the record knows it.
func (s *OutboxService) Update(ctx context.Context, id string, r OutboundResult) (*Outbound, error) {
	if r.Source != OutboundFromSend && r.Source != OutboundFromPoll {
		return nil, Errorf(EINVALID, "source must be send or poll")
	}
	if r.Task != nil && !ValidRemoteID(string(r.Task.ID)) {
		return nil, Errorf(EINVALID, "the task has no valid id")
	}
	if len(r.Error) > 2048 {
		r.Error = truncateUTF8(r.Error, 2048) + "…"
	}
	o, _, err := s.outbox.ModifyOutbound(ctx, id, func(o *Outbound) (*WakeRequest, error) {
		now := s.Now().UTC()
		if r.Task != nil {
			if o.TaskID != "" && r.Task.ID != o.TaskID {
				return nil, Errorf(EINVALID, "task %s is not the task of this record (%s)", r.Task.ID, o.TaskID)
			}
			o.ApplyTask(r.Task, r.Source, now)
		}
		if r.Reply != nil {
			o.ApplyEvent(r.Reply, r.Source, now)
		}
		if r.Error != "" {
			o.Error = r.Error
			if o.TaskID == "" && r.Source == OutboundFromSend {
				o.State = a2a.TaskStateFailed
			}
			o.addUpdate(OutboundUpdate{At: now, Source: r.Source, State: o.State, Text: "error: " + r.Error})
		} else if r.Source == OutboundFromSend {
			o.Error = ""
		}
		o.UpdatedAt = now
		return nil, nil
	})
	return o, err
}

// ReceivePush records a push notification that arrived at an agent's
// address about a task the agent sent: event is what the push carried,
// about the remote task taskID, and token is the notification token it
// presented. The token must match the record's push token (compared in
// constant time): EUNAUTHORIZED otherwise. A task id the agent never sent
// is ENOTFOUND, unless the token belongs to one of its records still
// waiting for the target to name its task (a push may come before the
// answer to the send): that record takes the task id.
func (s *OutboxService) ReceivePush(ctx context.Context, agentID string, token string, taskID a2a.TaskID, ev a2a.Event) (*Outbound, error) {
	if !ValidRemoteID(string(taskID)) {
		return nil, Errorf(EINVALID, "the push names no valid task id")
	}
	hash := HashToken(token)
	candidates, err := s.outbox.FindOutbounds(ctx, OutboundFilter{AgentID: agentID, TaskID: taskID})
	if err != nil {
		return nil, err
	}
	var match *Outbound
	for _, o := range candidates {
		if token != "" && o.PushTokenHash != "" && subtle.ConstantTimeCompare([]byte(o.PushTokenHash), []byte(hash)) == 1 {
			match = o
		}
	}
	if match == nil && len(candidates) > 0 {
		return nil, Errorf(EUNAUTHORIZED, "unauthorized")
	}
	if match == nil && token != "" {
		pending, err := s.outbox.FindOutbounds(ctx, OutboundFilter{AgentID: agentID, Pending: true, PushTokenHash: hash, Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(pending) > 0 {
			match = pending[0]
		}
	}
	if match == nil {
		return nil, Errorf(ENOTFOUND, "not found")
	}
	o, queued, err := s.outbox.ModifyOutbound(ctx, match.ID, func(o *Outbound) (*WakeRequest, error) {
		if o.TaskID != "" && o.TaskID != taskID {
			return nil, Errorf(EUNAUTHORIZED, "unauthorized")
		}
		o.ApplyEvent(ev, OutboundFromPush, s.Now().UTC())
		if o.TaskID == "" {
			o.TaskID = taskID
		}
		return outboundUpdateWake(o), nil
	})
	if err != nil {
		return nil, err
	}
	if queued && s.Bus != nil {
		// The wake is stored: a lost hint only delays it to the senders'
		// next poll.
		_ = s.Bus.Notify(ctx, WakeSubject)
	}
	return o, nil
}

// outboundUpdateWake is the outbound_update wake a push about the record's
// task queues in the transaction that records it, normalized as
// WakeService.Enqueue does (the preview, the remote agent's words, redacted
// and trimmed). A record without a context (the wake's debounce key)
// queues none.
func outboundUpdateWake(o *Outbound) *WakeRequest {
	r := o.WakeRequest()
	if r.normalize() != nil {
		return nil
	}
	return &r
}

// Find returns one record.
func (s *OutboxService) Find(ctx context.Context, id string) (*Outbound, error) {
	return s.outbox.FindOutboundByID(ctx, id)
}

// List returns an agent's records, the most recently updated first.
func (s *OutboxService) List(ctx context.Context, agentID string, limit int) ([]*Outbound, error) {
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	return s.outbox.FindOutbounds(ctx, OutboundFilter{AgentID: agentID, Limit: limit})
}
