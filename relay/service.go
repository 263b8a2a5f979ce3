package relay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/a2ajson"
	"github.com/switchboard-dev/switchboard/tracing"
	"go.opentelemetry.io/otel/trace"
)

// Limits on what a peer may send.
const (
	MaxMessageParts   = 100 // parts in one message
	MaxReferenceTasks = 64  // tasks one message refers to (referenceTaskIds)
	// MaxPeerMessages bounds the messages a peer adds to one task, so that
	// one task (rewritten whole on every change) stays small; a longer
	// conversation continues in a new task with the same contextId.
	MaxPeerMessages = 100
)

// DefaultStreamPoll is how often a stream rereads a task's event log when the
// bus has said nothing: the store is the truth, so a lost hint costs at most
// this much delay.
const DefaultStreamPoll = 5 * time.Second

// Service holds the task protocol: accepting messages, reading, listing
// and cancelling tasks, owner replies, push configurations and following a
// task's events. It is written only against the Store and Bus interfaces, so
// it is the same code on one instance and on many.
type Service struct {
	tasks       switchboard.TaskStore
	pushes      switchboard.PushConfigStore
	deliveries  switchboard.DeliveryStore
	sessions    switchboard.SessionStore
	agents      switchboard.AgentStore
	bus         switchboard.Bus
	log         *slog.Logger
	turns       localTurns               // blocking calls on this instance waiting for a turn to end
	dispatchers sync.Map                 // DeliveryMode → *directDispatcher: the running dispatchers that take new tasks at once
	messages    sync.Map                 // agent, peer and message id → *messageHold: sends in progress (hold.go)
	early       sync.Map                 // delivery id → *earlyTask: new tasks sent before they are written (early.go)
	earlyTasks  sync.Map                 // task id → *earlyTask: the same, until written or refused
	earlyUse    earlyUsage               // what the early tasks of each peer hold, for its quotas
	direct      switchboard.DirectOffers // set once by OfferDirectly, before use: new tasks offered to connections here

	// Tracer records the spans of the task protocol (store writes, the
	// hint to the agent's instance) and gives new deliveries the trace
	// context of the request that caused them; nil: tracing off. Set it
	// before the service is used.
	Tracer *tracing.Tracer
	// Now returns the current time; tests may replace it.
	Now func() time.Time
	// StreamPoll is how often FollowTask rereads the log without a hint.
	StreamPoll time.Duration
	// DeliveryDeadline is how long a task may wait to be delivered.
	DeliveryDeadline time.Duration
	// AckTimeout is how long an offer may wait for the agent's
	// acknowledgement before it is offered again.
	AckTimeout time.Duration
	// InstanceID names this process among the instances of a deployment;
	// offers it holds are marked with it.
	InstanceID string
	// OnAck, if set, is called when AckOffer or RejectOffer records the
	// first acknowledgement of a delivery, with the agent's mode, the
	// delivery as it was offered (CreatedAt: when the work was accepted;
	// OfferedAt: when the acknowledged offer was made) and the time of the
	// acknowledgement. It is for metrics: it runs on the caller's goroutine
	// and must return at once. Set it before the service is used.
	OnAck func(mode switchboard.DeliveryMode, d *switchboard.Delivery, at time.Time)
	// MaxOpenTasksPerPeer bounds the unfinished tasks (submitted, working,
	// input-required, auth-required) one peer may hold on one agent: a
	// message that would start another is refused with EQUOTA, while
	// messages to its unfinished tasks are not. 0: no bound. The store
	// checks it as it writes (see quota.go).
	MaxOpenTasksPerPeer int
	// EarlyWriteAfter is how long a task sent before it is written
	// (early.go) may wait for its first answer unwritten: it bounds how
	// long a task is unknown to every list, and lost with this process.
	EarlyWriteAfter time.Duration
	// WriteOnAnswer sends the new task of a blocking call to a connector
	// agent whose connection is on this instance before writing it, and
	// writes it once, with the agent's first answer (early.go), as a
	// dispatcher with DispatchConfig.WriteOnAnswer does a front's. Only a
	// lone instance may set it: what keeps an unwritten task's message
	// from being sent twice, and its peer within its quotas, is this
	// process's. Set it before the service is used.
	WriteOnAnswer bool
	// MaxPeerBytes bounds the bytes of A2A JSON of one peer's unfinished
	// tasks on one agent: a message that would take them past it (a new
	// task, or one that grows a task) is refused with EQUOTA. 0: no bound.
	MaxPeerBytes int64
}

// Store is what the relay reads and writes: tasks and their logs, push
// configurations, the delivery queue, agent sessions and agents.
type Store interface {
	switchboard.TaskStore
	switchboard.PushConfigStore
	switchboard.DeliveryStore
	switchboard.SessionStore
	switchboard.AgentStore
}

// New returns a Service over the given store and bus.
func New(store Store, bus switchboard.Bus, log *slog.Logger) *Service {
	return &Service{
		tasks:            store,
		pushes:           store,
		deliveries:       store,
		sessions:         store,
		agents:           store,
		bus:              bus,
		log:              log,
		Now:              time.Now,
		StreamPoll:       DefaultStreamPoll,
		DeliveryDeadline: switchboard.DefaultDeliveryDeadline,
		AckTimeout:       switchboard.DefaultAckTimeout,
		InstanceID:       switchboard.NewID(),
		EarlyWriteAfter:  DefaultEarlyWriteAfter,

		MaxOpenTasksPerPeer: DefaultMaxOpenTasksPerPeer,
		MaxPeerBytes:        DefaultMaxPeerBytes,
	}
}

// SendMessage accepts a message from a peer to an agent. A message without a
// taskId creates a task in state submitted; a message with one continues
// that task (it must be the peer's and not finished) and sets it back to
// submitted. A message whose id the peer already sent to the agent changes
// nothing and returns the task it went to with replayed set, so a retried
// send is harmless. The task and its event are written in one transaction
// before anything else learns of them. A message that would pass the
// peer's quotas (MaxOpenTasksPerPeer, MaxPeerBytes) is refused with
// EQUOTA.
func (s *Service) SendMessage(ctx context.Context, agent *switchboard.Agent, caller switchboard.Peer, req *a2a.SendMessageRequest, proto switchboard.ProtocolVersion) (t *switchboard.Task, replayed bool, err error) {
	return s.sendMessage(ctx, agent, caller, req, proto, nil)
}

// blocking is what a blocking call holds while it sends: the watch of the
// end of its new task's first turn, and the context whose end ends its
// wait.
type blocking struct {
	watch *turnWatch
	wait  context.Context
	hold  *messageHold // set by sendMessage for an agent whose dispatcher writes on answer
}

// sendMessage is SendMessage. With b not nil, a new task is watched for
// the end of its first turn from before it is committed, and b.watch set
// to the watch, which the caller must close; it stays nil for a message
// to an existing task.
func (s *Service) sendMessage(ctx context.Context, agent *switchboard.Agent, caller switchboard.Peer, req *a2a.SendMessageRequest, proto switchboard.ProtocolVersion, b *blocking) (t *switchboard.Task, replayed bool, err error) {
	if err := validateSend(req); err != nil {
		return nil, false, err
	}
	msg := req.Message
	push, err := inlinePushConfig(req, proto, s.Now())
	if err != nil {
		return nil, false, err
	}
	if err := s.checkReferences(ctx, caller, msg); err != nil {
		return nil, false, err
	}
	if s.writesOnAnswer(agent.Mode) { // its new tasks may be sent before they are written
		h, err := s.holdMessage(ctx, agent.ID, caller.ID, msg.ID)
		if err != nil {
			return nil, false, err
		}
		defer h.release()
		if b != nil {
			b.hold = h
		}
	}

	if msg.TaskID != "" {
		// A message sent again to a task that has finished since must be
		// recognised before continueTask refuses the finished task.
		if t, err := s.tasks.FindTaskByMessageID(ctx, agent.ID, caller.ID, msg.ID); err == nil {
			return t, true, nil
		} else if switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
			return nil, false, err
		}
		t, err = s.continueTask(ctx, agent, caller, req, push)
	} else {
		// A new task records its message id in the transaction that
		// creates it: a message sent again fails there, and is looked up
		// only then, which spares every first send a read.
		t, err = s.createTask(ctx, agent, caller, req, proto, push, b)
	}
	if errors.Is(err, switchboard.ErrDuplicateMessage) {
		// Sent before (or by a concurrent send that won the race).
		t, err = s.tasks.FindTaskByMessageID(ctx, agent.ID, caller.ID, msg.ID)
		return t, true, err
	}
	if err = quotaRefusal(err); switchboard.ErrorCode(err) == switchboard.EQUOTA && msg.TaskID == "" {
		// A retry of a message that created a task, refused by the quota
		// that task now fills, is answered with the task, as any retry.
		if t, ferr := s.tasks.FindTaskByMessageID(ctx, agent.ID, caller.ID, msg.ID); ferr == nil {
			return t, true, nil
		}
	}
	return t, false, err
}

func (s *Service) createTask(ctx context.Context, agent *switchboard.Agent, caller switchboard.Peer, req *a2a.SendMessageRequest, proto switchboard.ProtocolVersion, push *switchboard.PushConfig, b *blocking) (*switchboard.Task, error) {
	msg := cloneMessage(req.Message)
	contextID, minted := msg.ContextID, false
	if contextID == "" {
		contextID, minted = switchboard.NewID(), true
	} else if !switchboard.ValidRef(contextID) {
		return nil, switchboard.Errorf(switchboard.EINVALID, "contextId must be 1-%d characters of A-Z a-z 0-9 . _ : -", switchboard.MaxRefLen)
	}
	now := s.Now().UTC()
	msg.TaskID = a2a.TaskID(switchboard.NewID())
	msg.ContextID = contextID
	t := &switchboard.Task{
		A2A: a2a.Task{
			ID:        msg.TaskID,
			ContextID: contextID,
			Status:    a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: &now},
			History:   []*a2a.Message{msg},
			Metadata:  req.Metadata,
		},
		AgentID:       agent.ID,
		PeerID:        caller.ID,
		PeerLabel:     caller.Label,
		PeerKind:      caller.Kind,
		Protocol:      proto,
		ContextMinted: minted,
		CreatedAt:     now,
		UpdatedAt:     now,
	}
	change := &switchboard.TaskChange{MessageID: msg.ID, PushConfig: push, MaxBytes: switchboard.MaxTaskBytes, Quota: s.quota(0)}
	if push != nil {
		push.Config.TaskID = t.A2A.ID
	}
	var d *switchboard.Delivery
	var holder string
	if agent.Mode.Live() {
		d = s.newDelivery(t, switchboard.DeliverTask, msg.ID, now)
		d.TraceParent = s.Tracer.Traceparent(ctx)
		holder = s.reserveOffer(agent, d, now)
		change.NewDeliveries = []*switchboard.Delivery{d}
	}
	// What reserveOffer reserved is sent or given back once (settle),
	// also when a store panics on the way (a server recovers a handler's
	// panic): a reservation kept would hold a connection's or a
	// dispatcher's room, and a dispatcher's stop waits for its last one.
	settled := false
	settle := func(err error) bool {
		settled = true
		return s.sendReserved(ctx, agent, t, d, holder, err)
	}
	defer func() {
		if !settled {
			settle(errCreateAbandoned)
		}
	}()
	change.Wake = inboundWake(agent, t, caller, msg)
	if change.Wake != nil {
		change.Wake.TraceParent = s.Tracer.Traceparent(ctx)
	}
	if b != nil {
		// Before the commit, after which the agent may be offered the task
		// (by this instance or, on a poll, by another) and answer.
		w, err := s.watchTurn(ctx, t.ID(), createdSeq)
		if err != nil {
			settle(err)
			return nil, err
		}
		b.watch = w
		if holder != "" && push == nil && change.Wake == nil && b.hold != nil {
			early, err := s.sendsEarly(ctx, agent, t, change)
			if err != nil {
				settle(err)
				return nil, err
			}
			if early != nil {
				settled = true // createEarly sends it
				return s.createEarly(ctx, early, d, b)
			}
		}
	}
	err := s.peerWrite(ctx, agent, caller, change.Quota != nil, func(held int) error {
		if change.Quota != nil {
			change.Quota = s.quota(held)
		}
		sctx, span := s.Tracer.Start(ctx, "store CreateTask", trace.SpanKindClient, "switchboard.task_id", string(t.ID()))
		_, err := s.tasks.CreateTask(sctx, t, change)
		tracing.Fail(span, err)
		span.End()
		return err
	})
	sent := settle(err)
	if err != nil {
		return nil, err
	}
	// The task's subject is not notified: no one can watch a task whose
	// id was made here and is returned only now, but this call's own wait.
	if !sent {
		s.notifyAgent(ctx, agent)
	}
	s.notify(ctx, switchboard.AccountAgentsSubject(agent.AccountID)) // open consoles count it
	return t, nil
}

// notifyAgent tells whoever delivers to the agent that work is queued.
// The hint carries no trace: the trace context goes with the delivery,
// and the instance that offers it continues the trace from there.
func (s *Service) notifyAgent(ctx context.Context, agent *switchboard.Agent) {
	var subject string
	switch agent.Mode {
	case switchboard.ModeConnector:
		subject = switchboard.AgentSubject(agent.ID)
	case switchboard.ModeWebhook, switchboard.ModeFront:
		subject = switchboard.DispatchSubject(agent.Mode)
	default:
		return
	}
	ctx, span := s.Tracer.Start(ctx, "bus notify", trace.SpanKindProducer, "switchboard.agent_id", agent.ID)
	s.notify(ctx, subject)
	span.End()
}

func (s *Service) continueTask(ctx context.Context, agent *switchboard.Agent, caller switchboard.Peer, req *a2a.SendMessageRequest, push *switchboard.PushConfig) (*switchboard.Task, error) {
	msg := cloneMessage(req.Message)
	var t *switchboard.Task
	var events []*switchboard.TaskEvent
	err := s.peerWrite(ctx, agent, caller, s.quota(0) != nil, func(held int) (err error) {
		sctx, span := s.Tracer.Start(ctx, "store ModifyTask", trace.SpanKindClient, "switchboard.task_id", string(msg.TaskID))
		t, events, err = s.modifyPeerTask(sctx, agent, caller, req, msg, push, held)
		tracing.Fail(span, err)
		span.End()
		return err
	})
	var tooLarge *switchboard.TaskTooLargeError
	if errors.As(err, &tooLarge) {
		return nil, switchboard.Errorf(switchboard.EINVALID, "task %s would grow to %d bytes, more than the %d a task may hold; continue in a new task with the same contextId", msg.TaskID, tooLarge.Bytes, switchboard.MaxTaskBytes)
	} else if err != nil {
		return nil, taskNotFound(err)
	}
	s.notifyEvents(ctx, t, events)
	s.notifyAgent(ctx, agent)
	return t, nil
}

// modifyPeerTask writes msg, the peer's message to one of its tasks, and
// returns the task as written and the events written; held of the peer's
// tasks in flight unwritten count toward its quotas.
func (s *Service) modifyPeerTask(ctx context.Context, agent *switchboard.Agent, caller switchboard.Peer, req *a2a.SendMessageRequest, msg *a2a.Message, push *switchboard.PushConfig, held int) (*switchboard.Task, []*switchboard.TaskEvent, error) {
	return s.tasks.ModifyTask(ctx, msg.TaskID, func(t *switchboard.Task) (*switchboard.TaskChange, error) {
		if !t.VisibleTo(caller) {
			return nil, errTaskNotFound
		}
		if t.State().Terminal() {
			return nil, switchboard.Errorf(switchboard.EUNSUPPORTED, "task %s is %s and takes no more messages", t.ID(), switchboard.ShortState(t.State()))
		}
		if msg.ContextID != "" && msg.ContextID != t.A2A.ContextID {
			return nil, switchboard.Errorf(switchboard.EINVALID, "contextId %q does not match the task's context", msg.ContextID)
		}
		if countUserMessages(t.A2A.History) >= MaxPeerMessages {
			return nil, switchboard.Errorf(switchboard.EINVALID, "task %s already holds %d of your messages; continue in a new task with the same contextId", t.ID(), MaxPeerMessages)
		}
		if push != nil {
			push.Config.TaskID = t.ID()
		}
		now := s.Now().UTC()
		msg.ContextID = t.A2A.ContextID
		t.A2A.History = append(t.A2A.History, msg)
		t.A2A.Status = a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: &now}
		for k, v := range req.Metadata {
			t.A2A.SetMeta(k, v)
		}
		t.UpdatedAt = now
		ev := &a2a.TaskStatusUpdateEvent{TaskID: t.ID(), ContextID: t.A2A.ContextID, Status: t.A2A.Status}
		change := &switchboard.TaskChange{Events: []a2a.Event{ev}, MessageID: msg.ID, PushConfig: push, MaxBytes: switchboard.MaxTaskBytes, Quota: s.quota(held)}
		if agent.Mode.Live() {
			d := s.newDelivery(t, switchboard.DeliverMessage, msg.ID, now)
			d.TraceParent = s.Tracer.Traceparent(ctx)
			change.NewDeliveries = []*switchboard.Delivery{d}
		}
		change.Wake = inboundWake(agent, t, caller, msg)
		if change.Wake != nil {
			change.Wake.TraceParent = s.Tracer.Traceparent(ctx)
		}
		return change, nil
	})
}

// peerWrite runs write, a write of a message of the caller's that carries
// its quotas (quota set) to an agent whose tasks may be sent before they
// are written, in its turn with the peer's other writes, and tells it how
// many of the peer's tasks are in flight unwritten (early.go).
func (s *Service) peerWrite(ctx context.Context, agent *switchboard.Agent, caller switchboard.Peer, quota bool, write func(held int) error) error {
	if !quota || !s.writesOnAnswer(agent.Mode) {
		return write(0)
	}
	held, end, err := s.earlyUse.write(ctx, peerKey(agent.ID, caller.ID), false)
	if err != nil {
		return err
	}
	defer end()
	return write(held)
}

// newDelivery returns a delivery of the task to its agent, due at once.
func (s *Service) newDelivery(t *switchboard.Task, kind switchboard.DeliveryKind, messageID string, now time.Time) *switchboard.Delivery {
	return &switchboard.Delivery{
		ID: switchboard.NewID(), TaskID: t.ID(), AgentID: t.AgentID, Kind: kind, MessageID: messageID,
		State: switchboard.DeliveryQueued, Deadline: now.Add(s.DeliveryDeadline), NextAttemptAt: now, CreatedAt: now,
	}
}

func countUserMessages(history []*a2a.Message) int {
	n := 0
	for _, m := range history {
		if m != nil && m.Role == a2a.MessageRoleUser {
			n++
		}
	}
	return n
}

// errTaskNotFound is the one answer for a task that does not exist and for
// one the caller may not see: the two must look the same.
var errTaskNotFound = switchboard.Errorf(switchboard.ENOTFOUND, "task not found")

// errCreateAbandoned gives back the offer reserved for a task whose
// creation did not end (a panic on the way).
var errCreateAbandoned = errors.New("relay: the task's creation was abandoned")

// taskNotFound turns any not-found error into errTaskNotFound and passes
// other errors (and nil) through.
func taskNotFound(err error) error {
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
		return errTaskNotFound
	}
	return err
}

// GetTask returns a task the peer may see, or ENOTFOUND; an id that no
// task can have (see idFault) is EINVALID.
func (s *Service) GetTask(ctx context.Context, caller switchboard.Peer, id a2a.TaskID) (*switchboard.Task, error) {
	if err := peerTaskID(id); err != nil {
		return nil, err
	}
	t, err := s.tasks.FindTaskByID(ctx, id)
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND || (err == nil && !t.VisibleTo(caller)) {
		return nil, errTaskNotFound
	} else if err != nil {
		return nil, err
	}
	return t, nil
}

// FindTaskUnscoped returns any task, whoever's it is. It is for the owner
// API, which checks that the caller owns the task's agent; peers use
// GetTask.
func (s *Service) FindTaskUnscoped(ctx context.Context, id a2a.TaskID) (*switchboard.Task, error) {
	t, err := s.tasks.FindTaskByID(ctx, id)
	return t, taskNotFound(err)
}

// CancelTask cancels a task the peer may see, at once: the relay's record
// is what counts. A connector agent that was offered the task is sent a
// cancel notice (now, or when it reconnects); a front's dispatcher is
// handed one, and cancels the task upstream. A finished task cannot be
// canceled (ENOTCANCELABLE), except that cancelling a canceled task again
// returns it unchanged.
func (s *Service) CancelTask(ctx context.Context, agent *switchboard.Agent, caller switchboard.Peer, id a2a.TaskID) (*switchboard.Task, error) {
	if err := peerTaskID(id); err != nil {
		return nil, err
	}
	t, events, err := s.tasks.ModifyTask(ctx, id, func(t *switchboard.Task) (*switchboard.TaskChange, error) {
		if !t.VisibleTo(caller) {
			return nil, errTaskNotFound
		}
		if t.State() == a2a.TaskStateCanceled {
			return nil, nil
		}
		if t.State().Terminal() {
			return nil, switchboard.Errorf(switchboard.ENOTCANCELABLE, "task %s is %s and cannot be canceled", t.ID(), switchboard.ShortState(t.State()))
		}
		change := &switchboard.TaskChange{Events: []a2a.Event{s.setStatus(t, a2a.TaskStateCanceled, nil)}}
		if (agent.Mode == switchboard.ModeConnector || agent.Mode == switchboard.ModeFront) && t.Offered {
			change.NewDeliveries = []*switchboard.Delivery{s.newDelivery(t, switchboard.DeliverCancel, "", s.Now().UTC())}
		}
		return change, nil
	})
	if err != nil {
		return nil, taskNotFound(err)
	}
	s.notifyEvents(ctx, t, events)
	s.notifyAgent(ctx, agent)
	return t, nil
}

// notify tells the watchers of a subject to look again. A failure only
// delays them (they poll the store), so it is logged, not returned.
func (s *Service) notify(ctx context.Context, subject string) {
	if err := s.bus.Notify(ctx, subject); err != nil {
		s.log.Warn("notify watchers", "subject", subject, "err", err)
	}
}

func (s *Service) notifyEvents(ctx context.Context, t *switchboard.Task, events []*switchboard.TaskEvent) {
	s.turns.finish(t, events) // before the hint, so that a waiter woken by it finds its turn handed over
	if n := len(events); n > 0 {
		s.notify(ctx, switchboard.TaskSubject(events[n-1].TaskID))
		if events[n-1].Pushes > 0 {
			s.notify(ctx, switchboard.PushSubject)
		}
	}
}

func validateSend(req *a2a.SendMessageRequest) error {
	msg := req.Message
	switch {
	case msg == nil:
		return switchboard.Errorf(switchboard.EINVALID, "message is required")
	case msg.ID == "":
		return switchboard.Errorf(switchboard.EINVALID, "message.messageId is required")
	case len(msg.ID) > switchboard.MaxMessageIDLen:
		return switchboard.Errorf(switchboard.EINVALID, "message.messageId is longer than %d characters", switchboard.MaxMessageIDLen)
	case msg.Role != a2a.MessageRoleUser:
		return switchboard.Errorf(switchboard.EINVALID, "message.role must be ROLE_USER (user)")
	case len(msg.Parts) == 0:
		return switchboard.Errorf(switchboard.EINVALID, "message.parts must hold at least one part")
	case len(msg.Parts) > MaxMessageParts:
		return switchboard.Errorf(switchboard.EINVALID, "message.parts holds more than %d parts", MaxMessageParts)
	case len(msg.ReferenceTasks) > MaxReferenceTasks:
		return switchboard.Errorf(switchboard.EINVALID, "message.referenceTaskIds holds more than %d tasks", MaxReferenceTasks)
	}
	if err := peerIDs(msg); err != nil {
		return err
	}
	if i := a2ajson.EmptyPart(msg.Parts); i >= 0 {
		return switchboard.Errorf(switchboard.EINVALID, "message.parts[%d] has no content", i)
	}
	if req.Config != nil && req.Config.HistoryLength != nil && *req.Config.HistoryLength < 0 {
		return switchboard.Errorf(switchboard.EINVALID, "configuration.historyLength must not be negative")
	}
	return nil
}

// checkReferences refuses a message whose referenceTaskIds name a task that
// is not the caller's own on this agent: one peer may not point the agent
// at another peer's work. "Not found" and "not yours" read the same.
func (s *Service) checkReferences(ctx context.Context, caller switchboard.Peer, msg *a2a.Message) error {
	for i, ref := range msg.ReferenceTasks {
		t, err := s.tasks.FindTaskByID(ctx, ref)
		if switchboard.ErrorCode(err) == switchboard.ENOTFOUND || (err == nil && !t.VisibleTo(caller)) {
			return switchboard.Errorf(switchboard.EINVALID, "message.referenceTaskIds[%d]: task not found", i)
		} else if err != nil {
			return err
		}
	}
	return nil
}

// peerIDs refuses the ids of a peer's message that hold a control
// character or are not UTF-8 (see idFault).
func peerIDs(msg *a2a.Message) error {
	check := func(field, id string) error {
		if fault := idFault(id); fault != "" {
			return switchboard.Errorf(switchboard.EINVALID, "message.%s %s", field, fault)
		}
		return nil
	}
	if err := check("messageId", msg.ID); err != nil {
		return err
	}
	if err := check("taskId", string(msg.TaskID)); err != nil {
		return err
	}
	if err := check("contextId", msg.ContextID); err != nil {
		return err
	}
	for i, ref := range msg.ReferenceTasks {
		if err := check(fmt.Sprintf("referenceTaskIds[%d]", i), string(ref)); err != nil {
			return err
		}
	}
	return nil
}

// peerTaskID refuses a task id a peer named that holds a control character
// or is not UTF-8: no task has such an id.
func peerTaskID(id a2a.TaskID) error {
	if fault := idFault(string(id)); fault != "" {
		return switchboard.Errorf(switchboard.EINVALID, "the task id %s", fault)
	}
	return nil
}

// idFault describes what makes id unusable as an id, or returns "" if
// nothing does. Ids (message, task, context and artifact ids, whoever chose
// them) are UTF-8 text without control characters: no C0 control (U+0000 to
// U+001F), no DEL (U+007F), no C1 control (U+0080 to U+009F), and no
// U+FFFD, which is what invalid UTF-8 and unpaired surrogate escapes
// become when JSON is decoded (two different invalid ids would otherwise
// become one). Such ids break what ids are handed to: environment
// variables (a NUL cannot be passed to a process at all), headers, log
// lines, terminals and text columns of databases.
func idFault(id string) string {
	for i, r := range id {
		switch {
		case r == utf8.RuneError:
			return fmt.Sprintf("is not valid UTF-8 text (byte %d); ids must be UTF-8 text without control characters", i)
		case unicode.IsControl(r):
			return fmt.Sprintf("holds the control character U+%04X (byte %d); ids must be UTF-8 text without control characters", r, i)
		}
	}
	return ""
}

// cloneMessage returns a shallow copy of m, so that the ids the relay sets
// do not leak back into the caller's request, without MetadataKey in its
// metadata: that key is the server's (see withoutOwnMetadata).
func cloneMessage(m *a2a.Message) *a2a.Message {
	return withoutOwnMetadata(m)
}

// withoutOwnMetadata returns a shallow copy of m whose metadata lacks
// MetadataKey. The key is the server's: what a peer puts there is dropped,
// so that an agent (a front's upstream, a connector) can trust what it
// reads under it, which only the server writes.
func withoutOwnMetadata(m *a2a.Message) *a2a.Message {
	c := *m
	if _, ok := c.Metadata[MetadataKey]; ok {
		c.Metadata = maps.Clone(c.Metadata)
		delete(c.Metadata, MetadataKey)
		if len(c.Metadata) == 0 {
			c.Metadata = nil
		}
	}
	return &c
}

// inlinePushConfig returns the push configuration sent with a message, checked.
func inlinePushConfig(req *a2a.SendMessageRequest, proto switchboard.ProtocolVersion, now time.Time) (*switchboard.PushConfig, error) {
	if req.Config == nil || req.Config.PushConfig == nil {
		return nil, nil
	}
	c := *req.Config.PushConfig
	if err := ValidatePushConfig(&c); err != nil {
		return nil, err
	}
	return &switchboard.PushConfig{Config: c, Protocol: proto, CreatedAt: now.UTC()}, nil
}

// ValidatePushConfig checks a push configuration a peer sent and gives it an
// id if it has none. The URL must be absolute http or https; whether its host
// may be reached is decided when a push is sent, after DNS resolution.
func ValidatePushConfig(c *a2a.PushConfig) error {
	if c.URL == "" {
		return switchboard.Errorf(switchboard.EINVALID, "push notification config needs a url")
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return switchboard.Errorf(switchboard.EINVALID, "push notification url must be an absolute http(s) URL")
	}
	if u.User != nil {
		return switchboard.Errorf(switchboard.EINVALID, "push notification url must not carry credentials")
	}
	if len(c.URL) > 2048 {
		return switchboard.Errorf(switchboard.EINVALID, "push notification url is longer than 2048 characters")
	}
	if len(c.Token) > 4096 {
		return switchboard.Errorf(switchboard.EINVALID, "push notification token is longer than 4096 characters")
	}
	if c.ID == "" {
		c.ID = switchboard.NewID()
	} else if !switchboard.ValidRef(c.ID) {
		return switchboard.Errorf(switchboard.EINVALID, "push notification config id must be 1-%d characters of A-Z a-z 0-9 . _ : -", switchboard.MaxRefLen)
	}
	if c.Auth != nil && c.Auth.Scheme == "" {
		return switchboard.Errorf(switchboard.EINVALID, "push notification authentication needs a scheme")
	}
	return nil
}

// inboundWake is the wake request that a peer's message to an agent
// causes. Inbound wakes are for inbox agents: connector agents receive the
// message on their socket and webhook agents in a request of its own.
func inboundWake(agent *switchboard.Agent, t *switchboard.Task, caller switchboard.Peer, msg *a2a.Message) *switchboard.WakeRequest {
	if agent.Mode != switchboard.ModeInbox {
		return nil
	}
	return &switchboard.WakeRequest{AgentID: agent.ID, PeerID: caller.ID, ContextID: t.A2A.ContextID, TaskID: t.ID(),
		Kind: switchboard.WakeInbound, From: caller.Label, Message: msg}
}
