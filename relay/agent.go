package relay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/a2ajson"
	"github.com/switchboard-dev/switchboard/tracing"
	"go.opentelemetry.io/otel/trace"
)

// This file holds the agent's side of the task protocol: what a connection
// (the hub) or a dispatcher (webhooks) calls to offer work to an agent and
// to record what the agent answers. Every answer is checked and normalised:
// the agent may only change its own tasks, may not reopen a finished task,
// and its events carry the relay's task and context ids whatever it sent.

// MetadataKey is the key under which the relay puts its own metadata on the
// messages it delivers and on the status events it writes.
const MetadataKey = "switchboard"

// ConnectAgent starts an agent's session on a connection: the session is
// recorded (replacing any other connection of the agent, on any instance,
// whose unacknowledged offers go back to the queue), of the work the agent
// confirmed earlier what it no longer holds (it restarted) is queued again
// with a fresh deadline (DeliveryDeadline from now). When the session
// replaced another connection's, the agent's subject is notified, so that
// the replaced one, wherever it is, finds out and closes at once rather than
// at its instance's next renewal. The connection itself claims its work when
// it answers hello; a first connection notifies no one but the consoles
// watching the agent's account (AccountAgentsSubject), which spares every
// instance a reread per connecting agent.
func (s *Service) ConnectAgent(ctx context.Context, agent *switchboard.Agent, session *switchboard.AgentSession, holding []a2a.TaskID) error {
	replaced, n, err := s.sessions.ConnectSession(ctx, session, holding, s.Now().Add(s.DeliveryDeadline))
	if err != nil {
		return fmt.Errorf("open session of agent %s: %w", agent.ID, err)
	}
	if replaced != "" {
		s.log.Info("a newer connection took over the agent's session", "agent_id", agent.ID, "holder", session.Holder, "replaced", replaced)
	}
	if n > 0 {
		s.log.Info("offering again the work an agent no longer holds", "agent_id", agent.ID, "deliveries", n)
	}
	if replaced != "" {
		s.notify(ctx, switchboard.AgentChangeSubject(agent.ID)) // the replaced connection closes
	}
	s.notify(ctx, switchboard.AccountAgentsSubject(agent.AccountID)) // open consoles show it live
	return nil
}

// RenewAgentSessions extends, until the given time, the sessions of the
// connections named by holders, and returns the holders it renewed: one
// statement for all the connections an instance holds. A holder missing from
// the answer was replaced by a newer connection of its agent.
func (s *Service) RenewAgentSessions(ctx context.Context, holders []string, until time.Time) ([]string, error) {
	return s.sessions.RenewSessions(ctx, holders, until)
}

// AgentsWithDueWork returns those of agentIDs with work queued and due:
// what an instance looks for, for its connected agents, in case a hint was
// lost.
func (s *Service) AgentsWithDueWork(ctx context.Context, agentIDs []string) ([]string, error) {
	return s.deliveries.AgentsWithDueWork(ctx, agentIDs)
}

// AgentSession returns the agent's session, live or expired; ENOTFOUND when
// it has none.
func (s *Service) AgentSession(ctx context.Context, agentID string) (*switchboard.AgentSession, error) {
	return s.sessions.FindSession(ctx, agentID)
}

// AgentConnectedSince reports whether the agent holds a live connection to
// any instance of the deployment, and since when.
func (s *Service) AgentConnectedSince(ctx context.Context, agentID string) (time.Time, bool, error) {
	sess, err := s.sessions.FindSession(ctx, agentID)
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
		return time.Time{}, false, nil
	} else if err != nil {
		return time.Time{}, false, err
	}
	if !sess.Live(s.Now()) {
		return time.Time{}, false, nil
	}
	return sess.ConnectedAt, true, nil
}

// AgentConnected reports whether the agent holds a live connection to any
// instance of the deployment.
func (s *Service) AgentConnected(ctx context.Context, agentID string) (bool, error) {
	sess, err := s.sessions.FindSession(ctx, agentID)
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return sess.Live(s.Now()), nil
}

// DisconnectAgents ends the sessions of connections that closed, named by
// their holders: the offers they held and did not acknowledge go back to
// the queue, to be offered on their agents' next connections, and each
// session ends unless a newer connection took it over. An instance that
// loses many connections at once ends them in a few statements.
func (s *Service) DisconnectAgents(ctx context.Context, holders []string) error {
	s.writeEarlyOffered(holders)
	var errs []error
	if err := s.sessions.CloseSessions(ctx, holders); err != nil {
		errs = append(errs, fmt.Errorf("close %d sessions: %w", len(holders), err))
	}
	agents, err := s.deliveries.ReleaseDeliveries(ctx, holders) // even when the sessions stay: they expire
	for _, id := range agents {
		s.notify(ctx, switchboard.AgentSubject(id))
	}
	if err != nil {
		errs = append(errs, fmt.Errorf("release the offers of %d connections: %w", len(holders), err))
	}
	return errors.Join(errs...)
}

// ClaimOffers offers up to max queued deliveries of the agent to holder and
// returns them as the requests to send. New tasks are offered only while
// the agent accepts tasks, as stored when the claim is made (agent may be a
// copy from before the owner's last change).
func (s *Service) ClaimOffers(ctx context.Context, agent *switchboard.Agent, holder string, max int) ([]*switchboard.Offer, error) {
	ds, err := s.deliveries.ClaimDeliveries(ctx, agent.ID, holder, max, s.AckTimeout)
	if err != nil {
		return nil, err
	}
	return s.offers(ctx, ds)
}

// offers builds the request of each claimed delivery. A delivery whose task
// vanished (the agent was deleted meanwhile) is dropped.
func (s *Service) offers(ctx context.Context, ds []*switchboard.Delivery) ([]*switchboard.Offer, error) {
	out := make([]*switchboard.Offer, 0, len(ds))
	for _, d := range ds {
		t, err := s.tasks.FindTaskByID(ctx, d.TaskID)
		if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
			continue
		} else if err != nil {
			return nil, err
		}
		if o := s.offerFor(d, t); o != nil {
			out = append(out, o)
		}
	}
	return out, nil
}

// offerFor builds the request that offers delivery d of task t, or returns
// nil when the task does not hold the delivery's message.
func (s *Service) offerFor(d *switchboard.Delivery, t *switchboard.Task) *switchboard.Offer {
	o := &switchboard.Offer{Delivery: d, Task: t}
	switch d.Kind {
	case switchboard.DeliverCancel:
		o.Cancel = &a2a.CancelTaskRequest{ID: t.ID()}
	default:
		msg := findMessage(t, d.MessageID)
		if msg == nil {
			// Cannot happen while messages are only ever appended; if it
			// does, the lease ends and the deadline fails the task.
			s.log.Error("delivery names a message its task does not hold", "delivery_id", d.ID, "message_id", d.MessageID, "task_id", t.ID())
			return nil
		}
		meta := map[string]any{
			"deliveryId": d.ID,
			"attempt":    d.Attempts,
			"from":       t.PeerLabel,
			"peerId":     t.PeerID,
			"protocol":   string(t.Protocol),
			"newTask":    d.Kind == switchboard.DeliverTask,
		}
		if t.PeerKind != switchboard.PeerOutside {
			// "agent": from is the sending agent's verified handle and
			// peerId its agent id; "community": a community's peer.
			meta["peerKind"] = string(t.PeerKind)
		}
		o.Send = &a2a.SendMessageRequest{
			Message:  msg,
			Config:   &a2a.SendMessageConfig{ReturnImmediately: true},
			Metadata: map[string]any{MetadataKey: meta},
		}
	}
	return o
}

func findMessage(t *switchboard.Task, id string) *a2a.Message {
	for _, m := range t.A2A.History {
		if m != nil && m.ID == id {
			return withoutOwnMetadata(m) // a message kept before the key was dropped as it came
		}
	}
	return nil
}

// AckOffer records that the agent received a delivery and, when answer is
// not nil, applies the agent's answer to it: a message (which completes the
// task), the task as the agent sees it, or a status or artifact update. d
// is the delivery as it was offered; its Holder says whose offer the agent
// answers. A late acknowledgement of an offer that went back to the queue
// still counts if no one offered the delivery since. An acknowledgement of
// an offer that was already acknowledged, or offered again, still applies
// the answer: delivery is at least once.
//
// The acknowledgement and the answer are written in one transaction.
func (s *Service) AckOffer(ctx context.Context, agent *switchboard.Agent, d *switchboard.Delivery, answer a2a.Event) error {
	return s.AckOfferAt(ctx, agent, d, answer, s.Now())
}

// AckOfferAt is AckOffer for an answer that arrived at at, and was held
// back since (see ApplyAgentEventAcking): at is when OnAck says it came.
func (s *Service) AckOfferAt(ctx context.Context, agent *switchboard.Agent, d *switchboard.Delivery, answer a2a.Event, at time.Time) error {
	if answer == nil || d.Kind == switchboard.DeliverCancel || onlyAcknowledges(answer) {
		if err := s.writeEarly(d); err != nil { // sent before it was written: written now, as created
			return err
		}
		return s.ackDeliveryAt(ctx, agent, d, at)
	}
	_, err := s.ackingEvent(ctx, agent, d.TaskID, answer, d, at)
	if switchboard.ErrorCode(err) == switchboard.EINVALIDAGENTRESPONSE {
		return s.FailAgentTask(ctx, agent, d.TaskID, switchboard.ErrorMessage(err), true)
	}
	return err
}

// onlyAcknowledges reports whether an answer to an offer changes nothing:
// the task as the agent sees it, still submitted, with no artifacts. (It
// is what a connector that queues the work answers.)
func onlyAcknowledges(answer a2a.Event) bool {
	t, ok := answer.(*a2a.Task)
	return ok && len(t.Artifacts) == 0 &&
		(t.Status.State == a2a.TaskStateSubmitted || t.Status.State == a2a.TaskStateUnspecified)
}

// RejectOffer records that the agent refused a delivery or answered it with
// something unusable: the offer is acknowledged (it arrived) and the task
// fails with reason. With invalid, the failure is marked as an invalid
// agent response, which a blocking caller receives as -32006.
func (s *Service) RejectOffer(ctx context.Context, agent *switchboard.Agent, d *switchboard.Delivery, reason string, invalid bool) error {
	if e := s.earlyOf(d); e != nil && d.Kind != switchboard.DeliverCancel {
		mark := ""
		if invalid {
			mark = invalidAnswerMark
		}
		if _, done, err := e.answer(ctx, s.Now(), nil, func(t *switchboard.Task) ([]a2a.Event, error) {
			return []a2a.Event{s.failStatus(t, reason, mark)}, nil
		}); done {
			return err
		}
	}
	if err := s.ackDelivery(ctx, agent, d); err != nil {
		return err
	}
	if d.Kind == switchboard.DeliverCancel {
		return nil
	}
	return s.FailAgentTask(ctx, agent, d.TaskID, reason, invalid)
}

// ackDelivery records that the agent received d, and tells OnAck if this
// was the delivery's first acknowledgement.
func (s *Service) ackDelivery(ctx context.Context, agent *switchboard.Agent, d *switchboard.Delivery) error {
	return s.ackDeliveryAt(ctx, agent, d, s.Now())
}

// ackDeliveryAt is ackDelivery for an acknowledgement that arrived at at.
func (s *Service) ackDeliveryAt(ctx context.Context, agent *switchboard.Agent, d *switchboard.Delivery, at time.Time) error {
	sctx, span := s.Tracer.Start(ctx, "store AckDelivery", trace.SpanKindClient, "switchboard.delivery_id", d.ID)
	first, err := s.deliveries.AckDelivery(sctx, d.ID, d.Holder)
	tracing.Fail(span, err)
	span.End()
	if err != nil {
		return fmt.Errorf("ack delivery %s: %w", d.ID, err)
	}
	if first && s.OnAck != nil {
		s.OnAck(agent.Mode, d, at)
	}
	return nil
}

// invalidAnswerMark is the status metadata that marks a failure caused by
// an unusable agent answer; upstreamMark one caused by a front's upstream.
const (
	invalidAnswerMark = "INVALID_AGENT_RESPONSE"
	upstreamMark      = "UPSTREAM_FAILED"
)

// FailAgentTask fails an unfinished task of the agent with reason as the
// status message. With invalid, the status carries a mark that makes a
// blocking caller answer -32006 InvalidAgentResponse.
func (s *Service) FailAgentTask(ctx context.Context, agent *switchboard.Agent, id a2a.TaskID, reason string, invalid bool) error {
	mark := ""
	if invalid {
		mark = invalidAnswerMark
	}
	return s.failAgentTask(ctx, agent, id, reason, mark, nil)
}

// FailUpstream fails the task of d because the agent's upstream (a front's)
// failed, acknowledging d unless acked says it was, and records m, the
// upstream's ids not recorded yet, if set: reason, which must be generic,
// is the status message, and a blocking caller answers -32603 with HTTP
// 502 (switchboard.EUPSTREAM).
func (s *Service) FailUpstream(ctx context.Context, agent *switchboard.Agent, d *switchboard.Delivery, acked bool, reason string, m *switchboard.FrontTaskMap) error {
	if e := s.earlyOf(d); e != nil && !acked {
		if _, done, err := e.answer(ctx, s.Now(), m, func(t *switchboard.Task) ([]a2a.Event, error) {
			return []a2a.Event{s.failStatus(t, reason, upstreamMark)}, nil
		}); done {
			return err
		}
	}
	if !acked {
		if err := s.ackDelivery(ctx, agent, d); err != nil {
			return err
		}
	}
	return s.failAgentTask(ctx, agent, d.TaskID, reason, upstreamMark, m)
}

// failAgentTask is FailAgentTask with the status marked with mark, if set,
// and a front's upstream ids m recorded with it, if set (so that a cancel
// can still reach the upstream's task).
func (s *Service) failAgentTask(ctx context.Context, agent *switchboard.Agent, id a2a.TaskID, reason, mark string, m *switchboard.FrontTaskMap) error {
	t, events, err := s.tasks.ModifyTask(ctx, id, func(t *switchboard.Task) (*switchboard.TaskChange, error) {
		if t.AgentID != agent.ID {
			return nil, errTaskNotFound
		}
		if t.State().Terminal() {
			return nil, nil
		}
		return &switchboard.TaskChange{Events: []a2a.Event{s.failStatus(t, reason, mark)}, FrontMap: m}, nil
	})
	if err != nil {
		return taskNotFound(err)
	}
	s.notifyEvents(ctx, t, events)
	return nil
}

// failStatus fails t with reason as the agent's status message, marked
// with mark if set, and returns the status event.
func (s *Service) failStatus(t *switchboard.Task, reason, mark string) *a2a.TaskStatusUpdateEvent {
	ev := s.setStatus(t, a2a.TaskStateFailed, agentText(t, reason))
	if mark != "" {
		ev.SetMeta(MetadataKey, map[string]any{"error": mark})
	}
	return ev
}

// tooLargeText says why an agent's event was not applied to a task it
// would have grown past MaxTaskBytes.
func tooLargeText(e *switchboard.TaskTooLargeError) string {
	return fmt.Sprintf("the task would grow to %d bytes, more than the %d a task may hold", e.Bytes, switchboard.MaxTaskBytes)
}

// InvalidAnswer reports whether a status event marks a failure caused by an
// unusable agent answer.
func InvalidAnswer(ev a2a.Event) bool {
	return failMark(ev) == invalidAnswerMark
}

// turnFault returns the error code a blocking caller answers for the event
// that ended a turn: EINVALIDAGENTRESPONSE, EUPSTREAM, or "" for none.
func turnFault(ev a2a.Event) switchboard.Code {
	switch failMark(ev) {
	case invalidAnswerMark:
		return switchboard.EINVALIDAGENTRESPONSE
	case upstreamMark:
		return switchboard.EUPSTREAM
	}
	return ""
}

// failMark returns the mark of a failed status event, or "".
func failMark(ev a2a.Event) string {
	st, ok := ev.(*a2a.TaskStatusUpdateEvent)
	if !ok || st.Status.State != a2a.TaskStateFailed {
		return ""
	}
	m, _ := st.Metadata[MetadataKey].(map[string]any)
	mark, _ := m["error"].(string)
	return mark
}

// ApplyAgentEvent records an event the agent sent about one of its tasks and
// returns the task as stored. Events about a finished task are ignored (the
// task is returned as it stands): a late update cannot reopen it. It
// returns ENOTFOUND for a task that is not the agent's and
// EINVALIDAGENTRESPONSE for an event that cannot be applied.
func (s *Service) ApplyAgentEvent(ctx context.Context, agent *switchboard.Agent, id a2a.TaskID, ev a2a.Event) (*switchboard.Task, error) {
	if ev == nil {
		return nil, switchboard.Errorf(switchboard.EINVALIDAGENTRESPONSE, "the agent sent an empty event")
	}
	s.writeEarlyTask(id)
	return s.applyAgentEvent(ctx, agent, id, ev, nil, nil)
}

// ApplyAgentEventAcking is ApplyAgentEvent for an event that comes while
// the agent's answer to the offer d, which said no more than "working", is
// held back (a connection holds such an answer for a moment, since the
// event that ends the turn usually follows it at once): the event and the
// acknowledgement of d are written in one transaction, the acknowledgement
// whatever becomes of the event. The working state the held answer would
// have set is left out; if the event is not applied, the caller applies
// the held answer with AckOfferAt. at is when the held answer arrived.
func (s *Service) ApplyAgentEventAcking(ctx context.Context, agent *switchboard.Agent, id a2a.TaskID, ev a2a.Event, d *switchboard.Delivery, at time.Time) (*switchboard.Task, error) {
	if ev == nil {
		return nil, switchboard.Errorf(switchboard.EINVALIDAGENTRESPONSE, "the agent sent an empty event")
	}
	if e := s.earlyOf(d); e != nil && e.t.ID() == id {
		// An event that cannot be applied is not, here: the caller then
		// writes the held answer.
		if _, err := s.applyEvent(e.copyTask(), ev); err != nil {
			return nil, err
		}
	}
	return s.ackingEvent(ctx, agent, id, ev, d, at)
}

// ackingEvent is ApplyAgentEventAcking, but for the task of d sent before
// it was written (early.go): that is written now, with ev, or failed as
// an invalid answer if ev cannot be applied.
func (s *Service) ackingEvent(ctx context.Context, agent *switchboard.Agent, id a2a.TaskID, ev a2a.Event, d *switchboard.Delivery, at time.Time) (*switchboard.Task, error) {
	if e := s.earlyOf(d); e != nil && e.t.ID() == id {
		if t, done, err := e.answer(ctx, at, nil, func(t *switchboard.Task) ([]a2a.Event, error) { return s.applyEvent(t, ev) }); done {
			return t, err
		}
	}
	return s.applyAcking(ctx, agent, id, ev, d, at, nil)
}

// AckOfferFront is AckOffer of a front's delivery whose answer ev (not
// nil) came from its upstream, which named its ids m: they are recorded
// (FrontStore.MapFrontTask) in the transaction of the acknowledgement.
func (s *Service) AckOfferFront(ctx context.Context, agent *switchboard.Agent, d *switchboard.Delivery, ev a2a.Event, m *switchboard.FrontTaskMap) error {
	ctx, cancel := recordContext(ctx) // an answer that comes as the server stops is kept
	defer cancel()
	if e := s.earlyOf(d); e != nil {
		if _, done, err := e.answer(ctx, s.Now(), m, func(t *switchboard.Task) ([]a2a.Event, error) { return s.applyEvent(t, ev) }); done {
			return err
		}
	}
	_, err := s.applyAcking(ctx, agent, d.TaskID, ev, d, s.Now(), m)
	if switchboard.ErrorCode(err) == switchboard.EINVALIDAGENTRESPONSE {
		return s.FailAgentTask(ctx, agent, d.TaskID, switchboard.ErrorMessage(err), true)
	}
	return err
}

// applyAcking is ApplyAgentEventAcking, recording front's ids too when set.
func (s *Service) applyAcking(ctx context.Context, agent *switchboard.Agent, id a2a.TaskID, ev a2a.Event, d *switchboard.Delivery, at time.Time, front *switchboard.FrontTaskMap) (*switchboard.Task, error) {
	ack := &switchboard.DeliveryAck{DeliveryID: d.ID, Holder: d.Holder}
	t, err := s.applyAgentEvent(ctx, agent, id, ev, ack, front)
	if ack.First && s.OnAck != nil {
		s.OnAck(agent.Mode, d, at)
	}
	return t, err
}

// applyAgentEvent is ApplyAgentEvent, and with ack also records that
// acknowledgement in the same transaction, whatever becomes of the event:
// an event that cannot be applied (or would grow the task past
// MaxTaskBytes), or a task that is finished or not the agent's, leaves the
// task as it was, and the acknowledgement is written all the same. ev is
// not nil.
func (s *Service) applyAgentEvent(ctx context.Context, agent *switchboard.Agent, id a2a.TaskID, ev a2a.Event, ack *switchboard.DeliveryAck, front *switchboard.FrontTaskMap) (*switchboard.Task, error) {
	t, events, applyErr, err := s.modifyAgentTask(ctx, agent, id, ev, ack, front)
	var tooLarge *switchboard.TaskTooLargeError
	if errors.As(err, &tooLarge) {
		applyErr = switchboard.Errorf(switchboard.EINVALIDAGENTRESPONSE, "%s", tooLargeText(tooLarge))
		if ack == nil {
			return nil, applyErr
		}
		t, events, _, err = s.modifyAgentTask(ctx, agent, id, nil, ack, front) // the acknowledgement alone
	}
	if err != nil {
		return nil, taskNotFound(err)
	}
	s.notifyEvents(ctx, t, events)
	if applyErr != nil {
		return nil, taskNotFound(applyErr)
	}
	return t, nil
}

// modifyAgentTask applies ev (none when nil), ack and front in one
// transaction. An error that undoes the event but not the acknowledgement
// comes back as applyErr.
func (s *Service) modifyAgentTask(ctx context.Context, agent *switchboard.Agent, id a2a.TaskID, ev a2a.Event, ack *switchboard.DeliveryAck, front *switchboard.FrontTaskMap) (t *switchboard.Task, events []*switchboard.TaskEvent, applyErr, err error) {
	ctx, span := s.Tracer.Start(ctx, "store ModifyTask", trace.SpanKindClient, "switchboard.task_id", string(id))
	defer func() {
		tracing.Fail(span, err)
		span.End()
	}()
	t, events, err = s.tasks.ModifyTask(ctx, id, func(t *switchboard.Task) (*switchboard.TaskChange, error) {
		applyErr = nil
		var evs []a2a.Event
		var err error
		switch {
		case t.AgentID != agent.ID:
			err = errTaskNotFound
		case t.State().Terminal() || ev == nil:
		default:
			evs, err = s.applyEvent(t, ev)
		}
		switch {
		case err != nil && ack == nil:
			return nil, err
		case err != nil:
			applyErr = err
			return &switchboard.TaskChange{Ack: ack, FrontMap: front}, nil // the task as it was, t's changes dropped
		case len(evs) == 0 && ack == nil && front == nil:
			return nil, nil
		}
		return &switchboard.TaskChange{Events: evs, Ack: ack, FrontMap: front, MaxBytes: switchboard.MaxTaskBytes,
			TraceParent: s.Tracer.Traceparent(ctx)}, nil
	})
	return t, events, applyErr, err
}

// agentStates are the states an agent may set.
var agentStates = map[a2a.TaskState]bool{
	a2a.TaskStateWorking: true, a2a.TaskStateInputRequired: true, a2a.TaskStateAuthRequired: true,
	a2a.TaskStateCompleted: true, a2a.TaskStateFailed: true, a2a.TaskStateCanceled: true, a2a.TaskStateRejected: true,
}

// applyEvent changes t as the agent's event says and returns the events to
// log, with the task's own ids.
func (s *Service) applyEvent(t *switchboard.Task, ev a2a.Event) ([]a2a.Event, error) {
	switch e := ev.(type) {
	case *a2a.Message:
		// A direct answer completes the task: the message is the status
		// message, and its parts the task's artifact.
		msg, err := agentMessage(t, e)
		if err != nil {
			return nil, err
		}
		art := s.addArtifact(t, &a2a.Artifact{ID: a2a.ArtifactID(switchboard.NewID()), Name: "response", Parts: msg.Parts}, false)
		t.A2A.History = append(t.A2A.History, msg)
		return []a2a.Event{art, s.setStatus(t, a2a.TaskStateCompleted, msg)}, nil
	case *a2a.TaskStatusUpdateEvent:
		return s.applyStatus(t, e.Status, e.Metadata)
	case *a2a.TaskArtifactUpdateEvent:
		if e.Artifact == nil || len(e.Artifact.Parts) == 0 {
			return nil, switchboard.Errorf(switchboard.EINVALIDAGENTRESPONSE, "an artifact update needs an artifact with parts")
		}
		if a2ajson.EmptyPart(e.Artifact.Parts) >= 0 {
			return nil, switchboard.Errorf(switchboard.EINVALIDAGENTRESPONSE, "the agent's artifact has an empty part")
		}
		if err := agentArtifactID(e.Artifact); err != nil {
			return nil, err
		}
		a := *e.Artifact
		if a.ID == "" {
			a.ID = a2a.ArtifactID(switchboard.NewID())
		}
		ev := s.addArtifact(t, &a, e.Append)
		ev.LastChunk = e.LastChunk
		return []a2a.Event{ev}, nil
	case *a2a.Task:
		var out []a2a.Event
		for _, a := range e.Artifacts {
			if a == nil || len(a.Parts) == 0 || hasArtifact(t, a) {
				continue
			}
			if a2ajson.EmptyPart(a.Parts) >= 0 {
				return nil, switchboard.Errorf(switchboard.EINVALIDAGENTRESPONSE, "the agent's artifact has an empty part")
			}
			if err := agentArtifactID(a); err != nil {
				return nil, err
			}
			c := *a
			if c.ID == "" {
				c.ID = a2a.ArtifactID(switchboard.NewID())
			}
			out = append(out, s.addArtifact(t, &c, false))
		}
		if e.Status.State == a2a.TaskStateUnspecified || e.Status.State == a2a.TaskStateSubmitted {
			if len(out) == 0 {
				// The agent only acknowledged; the task already says submitted.
				return nil, nil
			}
			return out, nil
		}
		st, err := s.applyStatus(t, e.Status, e.Metadata)
		return append(out, st...), err
	}
	return nil, switchboard.Errorf(switchboard.EINVALIDAGENTRESPONSE, "the agent sent an event of an unknown kind")
}

// applyStatus sets a status the agent reported.
func (s *Service) applyStatus(t *switchboard.Task, st a2a.TaskStatus, meta map[string]any) ([]a2a.Event, error) {
	if !agentStates[st.State] {
		return nil, switchboard.Errorf(switchboard.EINVALIDAGENTRESPONSE, "an agent cannot set the state %s", st.State)
	}
	var msg *a2a.Message
	if st.Message != nil {
		var err error
		if msg, err = agentMessage(t, st.Message); err != nil {
			return nil, err
		}
		t.A2A.History = append(t.A2A.History, msg)
	}
	ev := s.setStatus(t, st.State, msg)
	if len(meta) > 0 {
		ev.Metadata = meta
		delete(ev.Metadata, MetadataKey) // the relay's own key is not the agent's to set
	}
	return []a2a.Event{ev}, nil
}

// setStatus moves t to state with msg as the status message, now, and
// returns the status event.
func (s *Service) setStatus(t *switchboard.Task, state a2a.TaskState, msg *a2a.Message) *a2a.TaskStatusUpdateEvent {
	now := s.Now().UTC()
	t.A2A.Status = a2a.TaskStatus{State: state, Message: msg, Timestamp: &now}
	t.UpdatedAt = now
	return &a2a.TaskStatusUpdateEvent{TaskID: t.ID(), ContextID: t.A2A.ContextID, Status: t.A2A.Status}
}

// addArtifact adds a (or, with appendParts, adds its parts to the artifact
// with the same id) and returns the artifact event.
func (s *Service) addArtifact(t *switchboard.Task, a *a2a.Artifact, appendParts bool) *a2a.TaskArtifactUpdateEvent {
	t.UpdatedAt = s.Now().UTC()
	for i, old := range t.A2A.Artifacts {
		if old != nil && old.ID == a.ID {
			if appendParts {
				merged := *old
				merged.Parts = append(append(a2a.ContentParts{}, old.Parts...), a.Parts...)
				t.A2A.Artifacts[i] = &merged
			} else {
				t.A2A.Artifacts[i] = a
			}
			return &a2a.TaskArtifactUpdateEvent{TaskID: t.ID(), ContextID: t.A2A.ContextID, Artifact: a, Append: appendParts}
		}
	}
	t.A2A.Artifacts = append(t.A2A.Artifacts, a)
	return &a2a.TaskArtifactUpdateEvent{TaskID: t.ID(), ContextID: t.A2A.ContextID, Artifact: a}
}

func hasArtifact(t *switchboard.Task, a *a2a.Artifact) bool {
	for _, old := range t.A2A.Artifacts {
		if old != nil && a.ID != "" && old.ID == a.ID {
			return true
		}
	}
	return false
}

// agentArtifactID refuses an artifact id that holds a control character
// or is not UTF-8 (see idFault): the relay hands it on to peers as it
// hands on its own ids.
func agentArtifactID(a *a2a.Artifact) error {
	if fault := idFault(string(a.ID)); fault != "" {
		return switchboard.Errorf(switchboard.EINVALIDAGENTRESPONSE, "the agent's artifactId %s", fault)
	}
	return nil
}

// agentMessage checks a message from the agent (its parts, and its own
// ids, which peers get as they are: see idFault) and gives it the task's
// ids and the agent role.
func agentMessage(t *switchboard.Task, m *a2a.Message) (*a2a.Message, error) {
	if len(m.Parts) == 0 {
		return nil, switchboard.Errorf(switchboard.EINVALIDAGENTRESPONSE, "the agent's message has no parts")
	}
	if a2ajson.EmptyPart(m.Parts) >= 0 {
		return nil, switchboard.Errorf(switchboard.EINVALIDAGENTRESPONSE, "the agent's message has an empty part")
	}
	if fault := idFault(m.ID); fault != "" {
		return nil, switchboard.Errorf(switchboard.EINVALIDAGENTRESPONSE, "the agent's messageId %s", fault)
	}
	for i, ref := range m.ReferenceTasks {
		if fault := idFault(string(ref)); fault != "" {
			return nil, switchboard.Errorf(switchboard.EINVALIDAGENTRESPONSE, "the agent's referenceTaskIds[%d] %s", i, fault)
		}
	}
	c := *m
	if c.ID == "" {
		c.ID = switchboard.NewID()
	}
	c.Role, c.TaskID, c.ContextID = a2a.MessageRoleAgent, t.ID(), t.A2A.ContextID
	return &c, nil
}

// agentText returns a text message from the agent on task t.
func agentText(t *switchboard.Task, text string) *a2a.Message {
	m := a2a.NewMessageForTask(a2a.MessageRoleAgent, t.A2A.TaskInfo(), a2a.NewTextPart(text))
	m.ID = switchboard.NewID()
	return m
}

// AgentTask returns one of the agent's own tasks, or ENOTFOUND.
func (s *Service) AgentTask(ctx context.Context, agent *switchboard.Agent, id a2a.TaskID) (*switchboard.Task, error) {
	s.writeEarlyTask(id)
	t, err := s.tasks.FindTaskByID(ctx, id)
	if err == nil && t.AgentID != agent.ID {
		return nil, errTaskNotFound
	}
	return t, taskNotFound(err)
}
