package relay

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// PushSubject is notified when push notifications are queued, so that the
// push senders claim them at once rather than at their next poll.
const PushSubject = "push"

// Defaults of PushSendConfig.
const (
	DefaultPushConcurrency = 8
	DefaultPushTimeout     = 15 * time.Second
	DefaultPushPoll        = 2 * time.Second
	DefaultPushMaxAttempts = 12
	DefaultPushMaxAge      = 24 * time.Hour
	DefaultPushMinBackoff  = time.Second
	DefaultPushMaxBackoff  = 10 * time.Minute
)

// PushSendConfig tunes RunPushSender. Zero values mean defaults.
type PushSendConfig struct {
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

func (c PushSendConfig) withDefaults() PushSendConfig {
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultPushConcurrency
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultPushTimeout
	}
	if c.Poll <= 0 {
		c.Poll = DefaultPushPoll
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultPushMaxAttempts
	}
	if c.MaxAge <= 0 {
		c.MaxAge = DefaultPushMaxAge
	}
	if c.MinBackoff <= 0 {
		c.MinBackoff = DefaultPushMinBackoff
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = DefaultPushMaxBackoff
	}
	if c.MaxBackoff < c.MinBackoff {
		c.MaxBackoff = c.MinBackoff
	}
	if c.Jitter == nil {
		c.Jitter = rand.Float64
	}
	return c
}

// RetryWait returns the wait before the attempt after attempt n (1 for the
// first) failed: MinBackoff doubled n-1 times, at most MaxBackoff, placed
// between its half and its whole by Jitter; a longer retryAfter the
// receiver asked for wins, up to MaxBackoff.
func (c PushSendConfig) RetryWait(n int, retryAfter time.Duration) time.Duration {
	c = c.withDefaults()
	d := c.MinBackoff
	for i := 1; i < n && d < c.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, c.MaxBackoff)
	d = d/2 + time.Duration(c.Jitter()*float64(d-d/2))
	if retryAfter > d {
		d = min(retryAfter, c.MaxBackoff)
	}
	return d
}

// pushRecordTimeout bounds the writing of an attempt's outcome once the
// sender's context has ended (shutdown).
const pushRecordTimeout = 5 * time.Second

// RunPushSender sends the queued push notifications of every task through
// p until ctx ends. Each push is claimed by one sender only, on any
// instance, with a lease that outlasts an attempt; a sender that dies
// mid-attempt leaves it to be claimed again when the lease ends (at least
// once). A configuration's pushes go in the order of the task's changes,
// each after the one before it was sent or given up. A failed attempt is
// retried with exponential backoff and jitter until cfg.MaxAttempts or
// cfg.MaxAge; a permanent refusal (the network guard, a 4xx other than
// 408 and 429) is not retried. The same limits apply to a push whose
// sender died mid-attempt (the lost attempt counts): it is given up when
// claimed again past them. It returns when ctx ends, after the
// attempts in flight, which ending ctx cuts short: they are queued again,
// due at once.
func (s *Service) RunPushSender(ctx context.Context, p switchboard.Pusher, cfg PushSendConfig) error {
	cfg = cfg.withDefaults()
	w, err := s.bus.Watch(ctx, PushSubject)
	if err != nil {
		return err
	}
	defer w.Close()
	poll := time.NewTicker(cfg.Poll)
	defer poll.Stop()

	holder := "push/" + s.InstanceID
	slots := make(chan struct{}, cfg.Concurrency)
	again := make(chan struct{}, 1) // a push finished: the next of its configuration may be due
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		if free := cfg.Concurrency - len(slots); free > 0 {
			ps, err := s.pushQueue.ClaimPushes(ctx, holder, s.Now().UTC(), free, cfg.Timeout+30*time.Second,
				switchboard.PushLimits{MaxAttempts: cfg.MaxAttempts, MaxAge: cfg.MaxAge})
			if err != nil && ctx.Err() == nil {
				s.log.Warn("claim pushes", "err", err)
			}
			for _, d := range ps {
				slots <- struct{}{}
				wg.Add(1)
				go func() {
					defer func() { <-slots; wg.Done() }()
					s.sendPush(ctx, p, d, holder, cfg)
					select {
					case again <- struct{}{}:
					default:
					}
				}()
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-w.C():
			if !ok {
				return switchboard.ErrBusClosed
			}
		case <-again:
		case <-poll.C:
		}
	}
}

// sendPush makes one attempt and records its outcome, even if ctx ends
// meanwhile.
func (s *Service) sendPush(ctx context.Context, p switchboard.Pusher, d *switchboard.PushDelivery, holder string, cfg PushSendConfig) {
	start := s.Now().UTC()
	a := &switchboard.PushAttempt{PushID: d.ID, At: start}
	state := switchboard.PushSent
	var res switchboard.PushResult
	var err error
	if ctx.Err() == nil {
		actx, cancel := context.WithTimeout(ctx, cfg.Timeout)
		res, err = p.Push(actx, d.Config, d.Task)
		cancel()
	} else {
		err = ctx.Err()
	}
	a.StatusCode = res.StatusCode
	if err != nil {
		state, a.NextAttemptAt, a.Error = s.pushFailed(ctx, d, res, err, cfg)
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pushRecordTimeout)
	defer cancel()
	if _, rerr := s.pushQueue.RecordPushAttempt(rctx, d.ID, holder, a, state); rerr != nil {
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

// pushFailed decides what becomes of a push whose attempt failed: queued
// again after a backoff, or given up.
func (s *Service) pushFailed(ctx context.Context, d *switchboard.PushDelivery, res switchboard.PushResult, err error, cfg PushSendConfig) (switchboard.PushState, *time.Time, string) {
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
	next := now.Add(cfg.RetryWait(d.Attempts, res.RetryAfter))
	return switchboard.PushQueued, &next, msg
}

// PushHistory is what the owner sees of a task's push notifications.
type PushHistory struct {
	Configs  []*switchboard.PushConfig
	Pushes   []*switchboard.PushDelivery
	Attempts []*switchboard.PushAttempt
}

// TaskPushes returns the push configurations of any task, its pushes and
// their attempts, for the owner API (which checks that the caller owns the
// task's agent).
func (s *Service) TaskPushes(ctx context.Context, id a2a.TaskID) (*PushHistory, error) {
	var h PushHistory
	var err error
	if h.Configs, err = s.pushes.FindPushConfigs(ctx, id); err != nil {
		return nil, err
	}
	if h.Pushes, err = s.pushQueue.FindPushes(ctx, id); err != nil {
		return nil, err
	}
	if h.Attempts, err = s.pushQueue.FindPushAttempts(ctx, id); err != nil {
		return nil, err
	}
	return &h, nil
}
