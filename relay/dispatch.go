package relay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/jobs"
	"github.com/switchboard-dev/switchboard/tracing"
	"go.opentelemetry.io/otel/trace"
)

// DefaultDispatchPerAgent is how many deliveries of one agent a dispatcher
// has in flight at once, unless DispatchConfig.PerAgent says otherwise.
const DefaultDispatchPerAgent = 4

// DispatchConfig tunes RunDispatcher. Zero values mean defaults.
type DispatchConfig struct {
	// Concurrency is how many deliveries are in flight at once (default 16).
	Concurrency int
	// PerAgent is how many deliveries of one agent are in flight at once,
	// across the dispatchers of all instances (default
	// DefaultDispatchPerAgent), so that an agent whose endpoint is slow
	// or hangs holds a few slots, not all of them.
	PerAgent int
	// Timeout bounds one delivery attempt (default 60 s).
	Timeout time.Duration
	// Poll is how often the queue is read without a hint (default 1 s).
	Poll time.Duration
	// MaxBackoff caps the wait between attempts (default 1 min).
	MaxBackoff time.Duration
	// Direct makes this instance's dispatcher take the new tasks created
	// here at once, offered to it in their creating transaction, up to
	// Concurrency in flight, whatever PerAgent says (front mode, whose
	// attempts are mostly waits on the upstream); the others are queued
	// and claimed.
	Direct bool
	// WriteOnAnswer, with Direct, sends the new task of a blocking call
	// before writing it, and writes it with its first answer (see
	// early.go): the Deliverer records that answer with AckOfferFront,
	// or a failure with FailUpstream, and stops when either returns
	// switchboard.ErrTaskUnwritten. Only for a deployment of one
	// instance: what keeps such a task's message from being sent twice is
	// this process's.
	WriteOnAnswer bool
}

// RunDispatcher delivers the queued work of every agent in mode through d
// until ctx ends: it claims due deliveries (each is claimed by one
// dispatcher only, on any instance), calls d, and records the answer. A
// failed attempt is retried with exponential backoff until the delivery's
// deadline, after which the sweeper fails the task. It returns when ctx
// ends, after the attempts in flight have finished: ending ctx cuts them
// short, and their deliveries go back to the queue, due at once.
func (s *Service) RunDispatcher(ctx context.Context, mode switchboard.DeliveryMode, d switchboard.Deliverer, cfg DispatchConfig) error {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 16
	}
	if cfg.PerAgent <= 0 {
		cfg.PerAgent = DefaultDispatchPerAgent
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = time.Minute
	}
	holder := "dispatch/" + string(mode) + "/" + s.InstanceID
	if cfg.Direct {
		defer s.registerDispatch(ctx, mode, d, cfg, holder)()
	}
	r := &jobs.Runner[*switchboard.Delivery]{
		Name: "dispatch " + string(mode), Bus: s.bus, Subject: switchboard.DispatchSubject(mode),
		Concurrency: cfg.Concurrency, Poll: cfg.Poll, Log: s.log,
		Claim: func(ctx context.Context, max int) ([]*switchboard.Delivery, error) {
			// The lease outlasts the attempt, so no one else takes it meanwhile.
			return s.deliveries.ClaimDueDeliveries(ctx, mode, holder, max, cfg.PerAgent, cfg.Timeout+30*time.Second)
		},
		Do: func(ctx context.Context, dl *switchboard.Delivery) { s.dispatchDelivery(ctx, mode, d, dl, cfg) },
	}
	return r.Run(ctx)
}

// dispatchDelivery builds the offer of a claimed delivery and makes the
// attempt. A delivery claimed as the dispatcher stopped is given back
// rather than left leased to no one.
func (s *Service) dispatchDelivery(ctx context.Context, mode switchboard.DeliveryMode, d switchboard.Deliverer, dl *switchboard.Delivery, cfg DispatchConfig) {
	if ctx.Err() != nil {
		s.giveBack(ctx, mode, dl)
		return
	}
	t, err := s.tasks.FindTaskByID(ctx, dl.TaskID)
	switch {
	case switchboard.ErrorCode(err) == switchboard.ENOTFOUND:
		return // deleted meanwhile: nothing to deliver
	case err != nil && ctx.Err() != nil:
		s.giveBack(ctx, mode, dl)
		return
	case err != nil:
		s.log.Warn("build offer", "mode", mode, "delivery_id", dl.ID, "err", err)
		return // the lease ends and the delivery is claimed again
	}
	if o := s.offerFor(dl, t); o != nil {
		s.dispatch(ctx, mode, d, o, cfg)
	}
}

// dispatchRecordTimeout bounds the writing of an attempt's outcome once
// the dispatcher's context has ended (shutdown).
const dispatchRecordTimeout = 5 * time.Second

// recordContext returns the context in which to record an agent's answer
// that came in an attempt whose context is ctx: the attempt's end (the
// dispatcher stopping) does not cut it short, since the agent took the
// work, but bounds it to dispatchRecordTimeout; until then, the
// attempt's deadline bounds it, if later.
func recordContext(ctx context.Context) (context.Context, context.CancelFunc) {
	deadline := time.Now().Add(dispatchRecordTimeout)
	if d, ok := ctx.Deadline(); ok && d.After(deadline) && ctx.Err() == nil {
		deadline = d
	}
	return context.WithDeadline(context.WithoutCancel(ctx), deadline)
}

// dispatch makes one delivery attempt and records its outcome. The outcome
// is recorded even if ctx ends meanwhile: a delivery left offered would
// wait out its lease (Timeout + 30 s) before anyone offered it again.
func (s *Service) dispatch(ctx context.Context, mode switchboard.DeliveryMode, d switchboard.Deliverer, o *switchboard.Offer, cfg DispatchConfig) {
	dl := o.Delivery
	agent, err := s.agents.FindAgentByID(ctx, dl.AgentID)
	if err != nil {
		if ctx.Err() != nil {
			s.giveBack(ctx, mode, dl)
			return
		}
		s.log.Warn("find agent of delivery", "delivery_id", dl.ID, "task_id", dl.TaskID, "agent_id", dl.AgentID, "err", err)
		return // the lease ends and the delivery is retried (or was deleted)
	}
	s.dispatchTo(ctx, mode, d, agent, o, cfg)
}

// dispatchTo is dispatch to the agent, read already.
func (s *Service) dispatchTo(ctx context.Context, mode switchboard.DeliveryMode, d switchboard.Deliverer, agent *switchboard.Agent, o *switchboard.Offer, cfg DispatchConfig) {
	dl := o.Delivery
	log := func() *slog.Logger {
		return s.log.With("delivery_id", dl.ID, "task_id", dl.TaskID, "agent_id", dl.AgentID, "attempt", dl.Attempts)
	}
	// A task sent before it was written is known by its delivery for as
	// long as this attempt runs: an answer to it once refused is told so.
	defer s.early.Delete(dl.ID)
	actx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	if e := s.earlyOf(dl); e != nil {
		actx = e.attempt(actx) // released by cancel
	}
	var span trace.Span
	if s.Tracer.On() && dl.TraceParent != "" {
		// The attempt is a span of the delivery's trace, and the request
		// to the agent carries its context (Delivery.TraceParent).
		actx, span = s.Tracer.StartFrom(actx, dl.TraceParent, "dispatch "+string(mode), trace.SpanKindClient, "switchboard.delivery_id", dl.ID)
		dl.TraceParent = s.Tracer.Traceparent(actx)
	}
	answer, err := d.Deliver(actx, agent, o)
	if span != nil {
		tracing.Fail(span, err)
		span.End()
	}
	cancel()
	if errors.Is(err, switchboard.ErrAnswerRecorded) {
		return
	}
	// A task sent before it was written, and not answered, is written as
	// created, for what follows to record the attempt's outcome on.
	if werr := s.writeEarly(dl); werr != nil {
		log().Info("a task sent before it was written could not be written", "err", werr)
		return
	}
	if err != nil && ctx.Err() != nil && switchboard.ErrorCode(err) != switchboard.EINVALIDAGENTRESPONSE {
		s.giveBack(ctx, mode, dl)
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dispatchRecordTimeout)
	defer cancel()
	switch {
	case err == nil:
		err = s.AckOffer(rctx, agent, dl, answer)
	case switchboard.ErrorCode(err) == switchboard.EINVALIDAGENTRESPONSE:
		log().Info("agent answered with something unusable", "err", err)
		err = s.RejectOffer(rctx, agent, dl, switchboard.ErrorMessage(err), true)
	default:
		next := s.Now().Add(jobs.Backoff{Min: time.Second, Max: cfg.MaxBackoff}.Wait(dl.Attempts, 0))
		log().Info("delivery attempt failed; will retry", "err", err, "next", next)
		err = s.deliveries.RetryDelivery(rctx, dl.ID, next, err.Error())
	}
	if err != nil {
		log().Warn("record delivery outcome", "err", fmt.Errorf("delivery %s: %w", dl.ID, err))
	}
}

// giveBack returns a delivery whose attempt the dispatcher's shutdown cut
// short to the queue, due at once, and tells the dispatchers: the agent is
// not at fault, and another instance (or this one once restarted) should
// not wait for the lease to end. The last error stays that of the last
// attempt that ran its course.
func (s *Service) giveBack(ctx context.Context, mode switchboard.DeliveryMode, dl *switchboard.Delivery) {
	log := s.log.With("delivery_id", dl.ID, "task_id", dl.TaskID, "agent_id", dl.AgentID, "attempt", dl.Attempts)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dispatchRecordTimeout)
	defer cancel()
	if err := s.deliveries.RetryDelivery(rctx, dl.ID, s.Now(), dl.LastError); err != nil {
		log.Warn("give back a delivery cut short by shutdown", "err", fmt.Errorf("delivery %s: %w", dl.ID, err))
		return
	}
	log.Debug("gave back a delivery cut short by shutdown")
	s.notify(rctx, switchboard.DispatchSubject(mode))
}
