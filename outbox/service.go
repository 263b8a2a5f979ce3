package outbox

import (
	"context"
	"crypto/subtle"
	"net/url"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/wake"
)

// Limits on outbound records.
const (
	MaxOutboundTargetLen = 2048 // characters of a target or endpoint
	MaxContextIDLen      = 200  // characters of a contextId we record
)

// Service keeps the record of what our agents send to other agents
// and of the answers that come back: the CLI records each send and each
// poll, and pushes received at an agent's address update the record.
type Service struct {
	outbox switchboard.OutboundStore
	tasks  switchboard.TaskStore

	// Now returns the current time; tests may replace it.
	Now func() time.Time

	// Bus, if set, is notified on WakeSubject when a push queued an
	// outbound_update wake, so that a wake sender claims it without waiting
	// for its poll. The wake itself is queued in the transaction that
	// records the push (ReceivePush). Set it before the service is used.
	Bus switchboard.Bus
}

// New returns a Service over the given stores.
func New(outbox switchboard.OutboundStore, tasks switchboard.TaskStore) *Service {
	return &Service{outbox: outbox, tasks: tasks, Now: time.Now}
}

// Record stores a new outbound record for a message about to be sent. With
// a push token, only its hash is kept: pushes must present the token.
func (s *Service) Record(ctx context.Context, o *switchboard.Outbound, pushToken string) error {
	if err := validateOutbound(o); err != nil {
		return err
	}
	if pushToken != "" {
		if len(pushToken) < 16 || len(pushToken) > 512 {
			return switchboard.Errorf(switchboard.EINVALID, "push token must be 16 to 512 characters")
		}
		o.PushTokenHash = switchboard.HashToken(pushToken)
	}
	now := s.Now().UTC()
	o.ID = switchboard.NewID()
	o.CreatedAt, o.UpdatedAt = now, now
	o.Updates = nil
	if len(o.Text) > switchboard.MaxOutboundText {
		o.Text = truncateUTF8(o.Text, switchboard.MaxOutboundText) + "…"
	}
	return s.outbox.CreateOutbound(ctx, o)
}

func validateOutbound(o *switchboard.Outbound) error {
	switch {
	case o.AgentID == "":
		return switchboard.Errorf(switchboard.EINVALID, "agent is required")
	case o.Target == "" || len(o.Target) > MaxOutboundTargetLen:
		return switchboard.Errorf(switchboard.EINVALID, "target is required (at most %d characters)", MaxOutboundTargetLen)
	case len(o.Endpoint) > MaxOutboundTargetLen:
		return switchboard.Errorf(switchboard.EINVALID, "endpoint is longer than %d characters", MaxOutboundTargetLen)
	case o.Protocol != switchboard.ProtocolV1 && o.Protocol != switchboard.ProtocolV03:
		return switchboard.Errorf(switchboard.EINVALID, "protocol must be 1.0 or 0.3")
	case len(o.ContextID) > MaxContextIDLen || len(o.TaskID) > MaxContextIDLen:
		return switchboard.Errorf(switchboard.EINVALID, "contextId and taskId are at most %d characters", MaxContextIDLen)
	case len(o.MessageID) > switchboard.MaxMessageIDLen:
		return switchboard.Errorf(switchboard.EINVALID, "messageId is at most %d characters", switchboard.MaxMessageIDLen)
	case !ValidRemoteID(o.Target),
		o.ContextID != "" && !ValidRemoteID(o.ContextID),
		o.TaskID != "" && !ValidRemoteID(string(o.TaskID)):
		return switchboard.Errorf(switchboard.EINVALID, "target, contextId and taskId must be printable text")
	}
	u, err := url.Parse(o.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return switchboard.Errorf(switchboard.EINVALID, "endpoint must be an http(s) URL without credentials")
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
func (s *Service) Update(ctx context.Context, id string, r OutboundResult) (*switchboard.Outbound, error) {
	if r.Source != switchboard.OutboundFromSend && r.Source != switchboard.OutboundFromPoll {
		return nil, switchboard.Errorf(switchboard.EINVALID, "source must be send or poll")
	}
	if r.Task != nil && !ValidRemoteID(string(r.Task.ID)) {
		return nil, switchboard.Errorf(switchboard.EINVALID, "the task has no valid id")
	}
	if len(r.Error) > 2048 {
		r.Error = truncateUTF8(r.Error, 2048) + "…"
	}
	o, _, err := s.outbox.ModifyOutbound(ctx, id, func(o *switchboard.Outbound) (*switchboard.WakeRequest, error) {
		now := s.Now().UTC()
		if r.Task != nil {
			if o.TaskID != "" && r.Task.ID != o.TaskID {
				return nil, switchboard.Errorf(switchboard.EINVALID, "task %s is not the task of this record (%s)", r.Task.ID, o.TaskID)
			}
			ApplyTask(o, r.Task, r.Source, now)
		}
		if r.Reply != nil {
			ApplyEvent(o, r.Reply, r.Source, now)
		}
		if r.Error != "" {
			o.Error = r.Error
			if o.TaskID == "" && r.Source == switchboard.OutboundFromSend {
				o.State = a2a.TaskStateFailed
			}
			addOutboundUpdate(o, switchboard.OutboundUpdate{At: now, Source: r.Source, State: o.State, Text: "error: " + r.Error})
		} else if r.Source == switchboard.OutboundFromSend {
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
func (s *Service) ReceivePush(ctx context.Context, agentID string, token string, taskID a2a.TaskID, ev a2a.Event) (*switchboard.Outbound, error) {
	if !ValidRemoteID(string(taskID)) {
		return nil, switchboard.Errorf(switchboard.EINVALID, "the push names no valid task id")
	}
	hash := switchboard.HashToken(token)
	candidates, err := s.outbox.FindOutbounds(ctx, switchboard.OutboundFilter{AgentID: agentID, TaskID: taskID})
	if err != nil {
		return nil, err
	}
	var match *switchboard.Outbound
	for _, o := range candidates {
		if token != "" && o.PushTokenHash != "" && subtle.ConstantTimeCompare([]byte(o.PushTokenHash), []byte(hash)) == 1 {
			match = o
		}
	}
	if match == nil && len(candidates) > 0 {
		return nil, switchboard.Errorf(switchboard.EUNAUTHORIZED, "unauthorized")
	}
	if match == nil && token != "" {
		pending, err := s.outbox.FindOutbounds(ctx, switchboard.OutboundFilter{AgentID: agentID, Pending: true, PushTokenHash: hash, Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(pending) > 0 {
			match = pending[0]
		}
	}
	if match == nil {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "not found")
	}
	o, queued, err := s.outbox.ModifyOutbound(ctx, match.ID, func(o *switchboard.Outbound) (*switchboard.WakeRequest, error) {
		if o.TaskID != "" && o.TaskID != taskID {
			return nil, switchboard.Errorf(switchboard.EUNAUTHORIZED, "unauthorized")
		}
		ApplyEvent(o, ev, switchboard.OutboundFromPush, s.Now().UTC())
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
		_ = s.Bus.Notify(ctx, switchboard.WakeSubject)
	}
	return o, nil
}

// outboundUpdateWake is the outbound_update wake a push about the record's
// task queues in the transaction that records it, normalized as
// wake.Service.Enqueue does (the preview, the remote agent's words, redacted
// and trimmed). A record without a context (the wake's debounce key)
// queues none.
func outboundUpdateWake(o *switchboard.Outbound) *switchboard.WakeRequest {
	r := WakeRequest(o)
	if wake.Normalize(&r) != nil {
		return nil
	}
	return &r
}

// Find returns one record.
func (s *Service) Find(ctx context.Context, id string) (*switchboard.Outbound, error) {
	return s.outbox.FindOutboundByID(ctx, id)
}

// List returns an agent's records, the most recently updated first.
func (s *Service) List(ctx context.Context, agentID string, limit int) ([]*switchboard.Outbound, error) {
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	return s.outbox.FindOutbounds(ctx, switchboard.OutboundFilter{AgentID: agentID, Limit: limit})
}
