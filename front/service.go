package front

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/netguard"
)

// Relay is what the front needs of the task protocol (relay.Service):
// recording the upstream's answers as the agent's.
type Relay interface {
	AckOfferFront(ctx context.Context, agent *switchboard.Agent, d *switchboard.Delivery, answer a2a.Event, m *switchboard.FrontTaskMap) error
	ApplyAgentEvent(ctx context.Context, agent *switchboard.Agent, id a2a.TaskID, ev a2a.Event) (*switchboard.Task, error)
	FailUpstream(ctx context.Context, agent *switchboard.Agent, d *switchboard.Delivery, acked bool, reason string, m *switchboard.FrontTaskMap) error
}

// DefaultTimeout bounds one task's exchange with the upstream.
const DefaultTimeout = 10 * time.Minute

// Service forwards the work of agents in front mode to their upstreams:
// it is the switchboard.Deliverer the front mode's dispatcher calls, once
// per delivery, on any instance. Each upstream's answers become the
// agent's events of our task, so peers see our tasks (their ids, their
// isolation, streams, lists and pushes) whatever the upstream offers.
type Service struct {
	store     switchboard.FrontStore
	relay     Relay
	guard     netguard.Options
	transport http.RoundTripper
	timeout   time.Duration
	log       *slog.Logger
	// Now is the clock (tests set it).
	Now func() time.Time

	cards    CardCache // the upstreams' cards, scrubbed for the public addresses
	inFlight attempts  // the attempts of tasks on this instance, for their peers' cancels
	ids      *PassIDs  // the ids of pass-through fronts' tasks, on this instance

	mu         sync.Mutex
	forwarders map[string]*entry // guarded by mu: by agent id
}

// entry is an agent's forwarder, for the front as it was when made.
type entry struct {
	fw      *Forwarder
	client  *http.Client
	secrets *Secrets // the values of the front's credentials, never to reach a peer
	front   *switchboard.Front
	checked time.Time // when the front was last read from the store
}

// frontRecheck is how long a front read from the store is used before it
// is read again: a change made on another instance takes effect within it
// (one made here, at once).
const frontRecheck = time.Second

// NewService returns the front service; opts configure the requests to
// upstreams, and timeout bounds one task's exchange (0: DefaultTimeout).
func NewService(store switchboard.FrontStore, relay Relay, opts ClientOptions, timeout time.Duration, log *slog.Logger) *Service {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Service{store: store, relay: relay, guard: opts.Guard, transport: NewTransport(opts), timeout: timeout,
		log: log.With("svc", "front"), Now: time.Now, forwarders: make(map[string]*entry), ids: NewPassIDs(0)}
}

// Check checks an upstream's URLs under the service's network guard.
func (s *Service) Check(upstream, cardURL string) error {
	return CheckUpstream(upstream, cardURL, s.guard)
}

// Find returns an agent's front, or ENOTFOUND.
func (s *Service) Find(ctx context.Context, agentID string) (*switchboard.Front, error) {
	return s.store.FindFront(ctx, agentID)
}

// Put sets an agent's upstream, after Check.
func (s *Service) Put(ctx context.Context, agentID, upstream, cardURL string) error {
	if err := s.Check(upstream, cardURL); err != nil {
		return err
	}
	old, _ := s.store.FindFront(ctx, agentID)
	if err := s.store.PutFront(ctx, agentID, upstream, cardURL); err != nil {
		return err
	}
	if old != nil {
		s.cards.Forget(old.Upstream)
		if old.Upstream != upstream {
			s.ids.forgetAgent(agentID) // another server's ids
		}
	}
	s.Forget(agentID)
	return nil
}

// Card returns the upstream's card of an agent, scrubbed for its public
// address, and how it stands (fresh, stale, missing or refused): the
// card is read with the front's client (its credentials), and kept.
func (s *Service) Card(ctx context.Context, agentID, public string) (*Card, CardStatus, *switchboard.Front, error) {
	f, e, err := s.front(ctx, agentID)
	if err != nil {
		return nil, CardStatus{}, nil, err
	}
	c, st := s.cards.GetWith(ctx, e.client, f.Upstream, f.CardURL, public, e.secrets)
	return c, st, f, nil
}

// MaxCredentialHeaders bounds the fixed headers of a front's credentials.
const MaxCredentialHeaders = 8

// SetCredentials replaces an agent's upstream credentials.
func (s *Service) SetCredentials(ctx context.Context, agentID string, c switchboard.FrontCredentials) error {
	if err := checkCredentials(c); err != nil {
		return err
	}
	if err := s.store.SetFrontCredentials(ctx, agentID, c); err != nil {
		return err
	}
	if f, err := s.store.FindFront(ctx, agentID); err == nil {
		s.cards.Forget(f.Upstream) // the card may read otherwise with other credentials
	}
	s.Forget(agentID)
	return nil
}

// Front returns an agent's front with the forwarder and client of its
// upstream, made again when the front changed.
func (s *Service) front(ctx context.Context, agentID string) (*switchboard.Front, *entry, error) {
	now := s.Now()
	s.mu.Lock()
	if e := s.forwarders[agentID]; e != nil && now.Sub(e.checked) < frontRecheck {
		s.mu.Unlock()
		return e.front, e, nil
	}
	s.mu.Unlock()
	f, err := s.store.FindFront(ctx, agentID)
	if err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.forwarders[agentID]; e != nil && e.front.UpdatedAt.Equal(f.UpdatedAt) {
		e.front, e.checked = f, now // the last failure may have changed
		return f, e, nil
	}
	if old := s.forwarders[agentID]; old != nil {
		old.fw.Close()
	}
	client, err := NewClient(s.transport, f.Upstream, f.Credentials)
	if err != nil {
		return nil, nil, err
	}
	secrets := CredentialSecrets(f.Credentials)
	e := &entry{client: client, secrets: secrets, front: f, checked: now, fw: NewForwarder(Config{
		Target: f.Upstream, CardURL: f.CardURL, WholeURL: true, FallbackCard: true, Blocking: true,
		HTTP: client, Timeout: s.timeout, Log: s.log.With("agent_id", agentID), Secrets: secrets,
	})}
	s.forwarders[agentID] = e
	return f, e, nil
}

// Deliver implements switchboard.Deliverer: it relays the offered message
// to the agent's upstream and the upstream's answers back as the agent's,
// until the upstream ends the turn, or cancels the upstream's task. The
// answers are recorded as they come (the first acknowledges the offer), so
// Deliver returns no answer of its own, but switchboard.ErrAnswerRecorded. A failure fails the task with a
// generic message for the peer and keeps the cause for the owner.
func (s *Service) Deliver(ctx context.Context, agent *switchboard.Agent, o *switchboard.Offer) (a2a.Event, error) {
	f, e, err := s.front(ctx, agent.ID)
	if err != nil {
		if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
			return nil, switchboard.Errorf(switchboard.EINVALIDAGENTRESPONSE, "This agent is unavailable: its front is misconfigured; tell its operator")
		}
		return nil, err
	}
	dl := o.Delivery
	if dl.Kind == switchboard.DeliverCancel {
		return nil, s.cancel(ctx, f, e, o)
	}
	if o.Send == nil || o.Send.Message == nil {
		return nil, nil
	}
	t := o.Task
	ids, err := s.upstreamIDs(ctx, t, dl.Kind == switchboard.DeliverTask && dl.Attempts <= 1)
	if err != nil {
		return nil, err
	}
	ctx, done := s.inFlight.start(ctx, t.ID())
	defer done()
	obs := &observation{}
	acked := false
	named := ids
	var unrecorded *switchboard.FrontTaskMap // ids the upstream named that are not written yet
	job := &Job{
		TaskID: t.ID(), ContextID: t.A2A.ContextID, NewTask: dl.Kind == switchboard.DeliverTask, From: t.PeerLabel,
		Message: o.Send.Message, UpstreamTaskID: a2a.TaskID(ids.UpstreamTaskID), UpstreamContextID: ids.UpstreamContextID,
		Update: func(ev a2a.Event) error {
			m := unrecorded
			unrecorded = nil
			if !acked {
				// The first answer acknowledges the offer, and the ids go
				// in its transaction.
				acked = true
				return s.relay.AckOfferFront(ctx, agent, dl, ev, m)
			}
			if m != nil {
				if err := s.store.MapFrontTask(ctx, *m); err != nil {
					return err
				}
			}
			_, err := s.relay.ApplyAgentEvent(ctx, agent, t.ID(), ev)
			return err
		},
		Named: func(theirs a2a.TaskInfo, _ bool) {
			if (theirs.TaskID == "" || named.UpstreamTaskID != "") && (theirs.ContextID == "" || named.UpstreamContextID != "") {
				return // nothing new
			}
			if named.UpstreamTaskID == "" {
				named.UpstreamTaskID = string(theirs.TaskID)
			}
			if named.UpstreamContextID == "" {
				named.UpstreamContextID = theirs.ContextID
			}
			m := named
			unrecorded = &m
		},
		// A peer's cancel delivered on this instance (cancel), and a task
		// refused while it was in flight unwritten, end the attempt with
		// their cause: the upstream's task is canceled, now or as soon as
		// the upstream names it.
		PeerCanceled: func(cause error) bool {
			return errors.Is(cause, errPeerCanceled) || errors.Is(cause, switchboard.ErrTaskUnwritten)
		},
		Fail: func(_ string, cause error) {
			m := unrecorded // recorded with the failure, so that a cancel can still reach the upstream's task
			unrecorded = nil
			reason := s.recordFailure(ctx, agent, f, obs, cause, methodOf(dl), t.PeerLabel)
			msg := peerMessage(reason)
			err := s.relay.FailUpstream(ctx, agent, dl, acked, msg, m)
			acked = true
			if err != nil && ctx.Err() == nil {
				s.log.Warn("record a failed task", "task_id", t.ID(), "err", err)
			}
		},
	}
	_ = e.fw.Handle(withObservation(ctx, obs), job)
	if !acked && errors.Is(context.Cause(ctx), errPeerCanceled) {
		return nil, nil // the task is canceled: the offer is acknowledged, not given back
	}
	if !acked && ctx.Err() != nil {
		return nil, context.Cause(ctx) // cut short before anything came: the delivery goes back to the queue
	}
	if !acked {
		return nil, nil // nothing came, and the task was not failed: acknowledged now, its deadline fails it
	}
	return nil, switchboard.ErrAnswerRecorded
}

// upstreamIDs returns what is known of the upstream's ids of task t: the
// task's own, or else the context its peer's earlier tasks were in. first
// says this is the first attempt of the task's first message, before which
// the upstream cannot have named its task.
func (s *Service) upstreamIDs(ctx context.Context, t *switchboard.Task, first bool) (switchboard.FrontTaskMap, error) {
	m := switchboard.FrontTaskMap{TaskID: t.ID(), AgentID: t.AgentID, PeerID: t.PeerID, ContextID: t.A2A.ContextID}
	if !first {
		found, err := s.store.FindFrontTask(ctx, t.ID())
		switch {
		case err == nil:
			m.UpstreamTaskID, m.UpstreamContextID = found.UpstreamTaskID, found.UpstreamContextID
		case switchboard.ErrorCode(err) != switchboard.ENOTFOUND:
			return m, err
		}
	}
	var err error
	// A context Switchboard made with this task has no upstream context yet.
	if m.UpstreamContextID == "" && m.ContextID != "" && !t.ContextMinted {
		if m.UpstreamContextID, err = s.store.FindFrontContext(ctx, t.AgentID, t.PeerID, t.A2A.ContextID); err != nil {
			return m, err
		}
	}
	return m, nil
}

// cancel cancels our task's task upstream: through the task's attempt,
// if one is in flight on this instance (it knows the upstream's task, or
// waits for the upstream to name it), or else by the upstream's task id
// recorded, if the upstream named one.
func (s *Service) cancel(ctx context.Context, f *switchboard.Front, e *entry, o *switchboard.Offer) error {
	if s.inFlight.stopPeer(o.Delivery.TaskID) {
		return nil
	}
	m, err := s.store.FindFrontTask(ctx, o.Delivery.TaskID)
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND || (err == nil && m.UpstreamTaskID == "") {
		return nil // never sent, or not named: nothing to cancel there
	} else if err != nil {
		return err
	}
	obs := &observation{}
	cctx := withObservation(WithPeer(ctx, o.Task.PeerLabel), obs)
	if err := e.fw.Cancel(cctx, a2a.TaskID(m.UpstreamTaskID)); err != nil {
		agent := &switchboard.Agent{ID: o.Delivery.AgentID}
		s.recordFailure(ctx, agent, f, obs, err, "CancelTask", o.Task.PeerLabel)
		// A task the upstream cannot cancel (finished there, or refused)
		// stays canceled here; only an upstream that did not answer is tried again.
		if reason, _ := classify(err, obs, f.Credentials); reason == switchboard.FrontNetwork || reason == switchboard.FrontUnavailable {
			return err
		}
	}
	return nil
}

// recordFailure classifies a failure, keeps it as the front's last and
// logs it; it returns the reason.
func (s *Service) recordFailure(ctx context.Context, agent *switchboard.Agent, f *switchboard.Front, obs *observation, cause error, method, peer string) string {
	reason, status := switchboard.FrontUnexpected, 0
	detail := "the upstream stopped answering before the task finished"
	if cause != nil {
		reason, status = classify(cause, obs, f.Credentials)
		detail = Describe(cause, CredentialSecrets(f.Credentials))
	} else {
		reason = switchboard.FrontUnavailable
	}
	detail = switchboard.Truncate(detail, 500)
	ff := &switchboard.FrontFailure{At: s.Now().UTC(), Reason: reason, Status: status, Method: method, Peer: peer, Detail: detail}
	s.log.Warn("upstream_error", "agent_id", agent.ID, "reason", reason, "status", status, "method", method, "err", detail)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := s.store.RecordFrontFailure(rctx, agent.ID, ff); err != nil {
		s.log.Warn("record the upstream's failure", "agent_id", agent.ID, "err", err)
	}
	return reason
}

// methodOf names the A2A method a delivery makes upstream.
func methodOf(d *switchboard.Delivery) string {
	if d.Kind == switchboard.DeliverCancel {
		return "CancelTask"
	}
	return "SendMessage"
}

// Forget drops the forwarder of an agent (deleted, or its front changed;
// a change is also seen by the next delivery).
func (s *Service) Forget(agentID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.forwarders[agentID]; e != nil {
		e.fw.Close()
		delete(s.forwarders, agentID)
	}
}

// Close releases every agent's forwarder (a gRPC upstream's connection),
// once the dispatcher that calls Deliver has stopped.
func (s *Service) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, e := range s.forwarders {
		e.fw.Close()
		delete(s.forwarders, id)
	}
}

var _ switchboard.Deliverer = (*Service)(nil)
