package push

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/jobs"
	"github.com/switchboard-dev/switchboard/tracing"
)

// Defaults of SendConfig.
const (
	DefaultConcurrency = 8
	DefaultTimeout     = 15 * time.Second
	DefaultPoll        = 2 * time.Second
	DefaultMaxAttempts = 12
	DefaultMaxAge      = 24 * time.Hour
	DefaultMinBackoff  = time.Second
	DefaultMaxBackoff  = 10 * time.Minute
)

// SendConfig tunes Run. Zero values mean defaults.
type SendConfig struct {
	// Concurrency is how many pushes are in flight at once.
	Concurrency int
	// Timeout bounds one attempt.
	Timeout time.Duration
	// Poll is how often the queue is read without a hint: the most a lost
	// hint (or a retry coming due) waits.
	Poll time.Duration
	// MaxAttempts is how many attempts a push gets before the sender gives
	// up on it.
	MaxAttempts int
	// MaxAge is how long after its change a push is still tried: a push
	// that fails when older is given up.
	MaxAge time.Duration
	// MinBackoff and MaxBackoff bound the wait between attempts: MinBackoff
	// after the first failure, doubling with each, up to MaxBackoff, each
	// wait drawn between its half and its whole (jitter). A receiver's
	// Retry-After is honoured up to MaxBackoff.
	MinBackoff, MaxBackoff time.Duration
	// Jitter returns a number in [0, 1) that places each wait between its
	// half and its whole (default: random); tests fix it.
	Jitter func() float64
	// OnAttempt, if set, is called after each attempt with the state it left
	// the push in: PushSent, PushQueued (to be retried) or PushFailed. It is
	// for metrics and must return at once.
	OnAttempt func(switchboard.PushState)
}

func (c SendConfig) withDefaults() SendConfig {
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Poll <= 0 {
		c.Poll = DefaultPoll
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.MaxAge <= 0 {
		c.MaxAge = DefaultMaxAge
	}
	if c.MinBackoff <= 0 {
		c.MinBackoff = DefaultMinBackoff
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	if c.Jitter == nil {
		c.Jitter = rand.Float64
	}
	return c
}

// Backoff returns the waits between attempts that c sets.
func (c SendConfig) Backoff() jobs.Backoff {
	c = c.withDefaults()
	return jobs.Backoff{Min: c.MinBackoff, Max: c.MaxBackoff, Jitter: c.Jitter}
}

// Pusher sends one push notification: the task, in the wire shape of the
// version the configuration was registered with, to its URL. *Sender is
// the one that goes over the network.
type Pusher interface {
	// Push posts task to c's URL. A nil error means the receiver answered
	// 2xx.
	Push(ctx context.Context, c *switchboard.PushConfig, task *a2a.Task) (Result, error)
}

// Result is the outcome of one push attempt.
type Result struct {
	// StatusCode is the HTTP status of the answer; 0 if none came.
	StatusCode int
	// RetryAfter is the wait the receiver asked for (Retry-After), if any.
	RetryAfter time.Duration
	// Permanent means that trying again cannot help: the address is refused
	// by the network guard, or the receiver refused the request itself.
	Permanent bool
}

// Store is what the push service reads and writes: the push queue, and the
// configurations its history shows.
type Store interface {
	switchboard.PushStore
	switchboard.PushConfigStore
}

// Service sends the push notifications that task changes queue (the store
// writes one per configuration of the task in the change's transaction)
// and shows owners what became of them. It is written against the store
// and the bus only.
type Service struct {
	store  Store
	bus    switchboard.Bus
	pusher Pusher
	log    *slog.Logger

	// Now returns the current time; tests may replace it.
	Now func() time.Time
	// InstanceID names this process; the pushes it claims are held by it.
	InstanceID string
}

// NewService returns a Service that sends through p.
func NewService(store Store, bus switchboard.Bus, p Pusher, log *slog.Logger) *Service {
	return &Service{store: store, bus: bus, pusher: p, log: log, Now: time.Now, InstanceID: switchboard.NewID()}
}

// recordTimeout bounds the writing of an attempt's outcome once the
// sender's context has ended (shutdown).
const recordTimeout = 5 * time.Second

// Run sends the queued push notifications of every task until ctx ends.
// Each push is claimed by one sender only, on any instance, with a lease
// that outlasts an attempt; a sender that dies mid-attempt leaves it to be
// claimed again when the lease ends (at least once). A configuration's
// pushes go in the order of the task's changes, each after the one before
// it was sent or given up. A failed attempt is retried with exponential
// backoff and jitter until cfg.MaxAttempts or cfg.MaxAge; a permanent
// refusal (the network guard, a 4xx other than 408 and 429) is not
// retried. The same limits apply to a push whose sender died mid-attempt
// (the lost attempt counts): it is given up when claimed again past them.
// It returns when ctx ends, after the attempts in flight, which ending ctx
// cuts short: they are queued again, due at once.
func (s *Service) Run(ctx context.Context, cfg SendConfig) error {
	return s.runner(cfg).Run(ctx)
}

// runner is the jobs runner that Run runs.
func (s *Service) runner(cfg SendConfig) *jobs.Runner[*switchboard.PushDelivery] {
	cfg = cfg.withDefaults()
	holder := "push/" + s.InstanceID
	limits := switchboard.PushLimits{MaxAttempts: cfg.MaxAttempts, MaxAge: cfg.MaxAge}
	return &jobs.Runner[*switchboard.PushDelivery]{
		Name: "push", Bus: s.bus, Subject: switchboard.PushSubject, Concurrency: cfg.Concurrency, Poll: cfg.Poll, Log: s.log,
		Claim: func(ctx context.Context, max int) ([]*switchboard.PushDelivery, error) {
			// The lease outlasts the attempt, so no one else takes it meanwhile.
			return s.store.ClaimPushes(ctx, holder, s.Now().UTC(), max, cfg.Timeout+30*time.Second, limits)
		},
		Do: func(ctx context.Context, d *switchboard.PushDelivery) { s.send(ctx, d, holder, cfg) },
	}
}

// send makes one attempt and records its outcome, even if ctx ends
// meanwhile.
func (s *Service) send(ctx context.Context, d *switchboard.PushDelivery, holder string, cfg SendConfig) {
	start := s.Now().UTC()
	a := &switchboard.PushAttempt{PushID: d.ID, At: start}
	state := switchboard.PushSent
	var res Result
	var err error
	if ctx.Err() == nil {
		actx, cancel := context.WithTimeout(ctx, cfg.Timeout)
		actx = tracing.WithTraceparent(actx, d.TraceParent) // the request carries it (Sender)
		res, err = s.pusher.Push(actx, d.Config, d.Task)
		cancel()
	} else {
		err = ctx.Err()
	}
	a.StatusCode = res.StatusCode
	if err != nil {
		state, a.NextAttemptAt, a.Error = s.failed(ctx, d, res, err, cfg)
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if _, rerr := s.store.RecordPushAttempt(rctx, d.ID, holder, a, state); rerr != nil {
		s.log.Warn("record push attempt", "push_id", d.ID, "task_id", d.TaskID, "err", rerr)
		return
	}
	if err != nil {
		s.log.Info("push attempt failed", "push_id", d.ID, "task_id", d.TaskID, "config_id", d.ConfigID,
			"attempt", d.Attempts, "err", a.Error, "state", state)
	}
	if cfg.OnAttempt != nil {
		cfg.OnAttempt(state)
	}
}

// failed decides what becomes of a push whose attempt failed: queued again
// after a backoff, or given up.
func (s *Service) failed(ctx context.Context, d *switchboard.PushDelivery, res Result, err error, cfg SendConfig) (switchboard.PushState, *time.Time, string) {
	now := s.Now().UTC()
	msg := err.Error()
	switch {
	case ctx.Err() != nil:
		// Cut short by shutdown: not the receiver's fault; due at once, for
		// another instance or this one once restarted.
		return switchboard.PushQueued, &now, "interrupted: the sender stopped"
	case res.Permanent:
		return switchboard.PushFailed, nil, msg + " (not retried)"
	case d.Attempts >= cfg.MaxAttempts:
		return switchboard.PushFailed, nil, fmt.Sprintf("%s (gave up after %d attempts)", msg, d.Attempts)
	case now.Sub(d.CreatedAt) >= cfg.MaxAge:
		return switchboard.PushFailed, nil, fmt.Sprintf("%s (gave up: older than %s)", msg, cfg.MaxAge)
	}
	next := now.Add(cfg.Backoff().Wait(d.Attempts, res.RetryAfter))
	return switchboard.PushQueued, &next, msg
}

// History is what the owner sees of a task's push notifications.
type History struct {
	Configs  []*switchboard.PushConfig
	Pushes   []*switchboard.PushDelivery
	Attempts []*switchboard.PushAttempt
}

// History returns the push configurations of any task, its pushes and
// their attempts, for the owner API (which checks that the caller owns the
// task's agent).
func (s *Service) History(ctx context.Context, id a2a.TaskID) (*History, error) {
	var h History
	var err error
	if h.Configs, err = s.store.FindPushConfigs(ctx, id); err != nil {
		return nil, err
	}
	if h.Pushes, err = s.store.FindPushes(ctx, id); err != nil {
		return nil, err
	}
	if h.Attempts, err = s.store.FindPushAttempts(ctx, id); err != nil {
		return nil, err
	}
	return &h, nil
}
