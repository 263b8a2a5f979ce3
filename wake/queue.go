package wake

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/jobs"
	"github.com/switchboard-dev/switchboard/redact"
)

// SenderConfig tunes RunSender and SendDue. Zero values mean defaults.
type SenderConfig struct {
	// Concurrency is how many wakes are sent at once (default 8).
	Concurrency int
	// Poll is how often the queue is read without a hint (default 1 s):
	// the most a due wake waits beyond its time.
	Poll time.Duration
	// Timeout bounds one wake request (default 15 s).
	Timeout time.Duration
	// Keep is how long finished wakes stay visible (default 7 days).
	Keep time.Duration
}

func (c *SenderConfig) defaults() {
	if c.Concurrency <= 0 {
		c.Concurrency = 8
	}
	if c.Poll <= 0 {
		c.Poll = time.Second
	}
	if c.Timeout <= 0 {
		c.Timeout = 15 * time.Second
	}
	if c.Keep <= 0 {
		c.Keep = 7 * 24 * time.Hour
	}
}

// RunSender sends due wakes until ctx ends, on any number of instances at
// once: each wake is claimed by one sender, with a lease that outlasts its
// request. It reads the queue when told (switchboard.WakeSubject), when a
// wake was sent, and every Poll; and it prunes finished wakes older than
// Keep once an hour. It returns once the wakes in flight, which ending ctx
// cuts short (they go back to pending, due at once), have finished.
func (s *Service) RunSender(ctx context.Context, cfg SenderConfig) error {
	cfg.defaults()
	prune := make(chan struct{})
	go func() {
		defer close(prune)
		s.pruneLoop(ctx, cfg.Keep)
	}()
	defer func() { <-prune }()
	return s.runner(cfg).Run(ctx)
}

// SendDue claims the wakes due now (at most cfg.Concurrency), sends them
// concurrently and records each outcome. It returns how many it claimed.
// If ctx ends meanwhile, the wakes it cut short go back to pending, due at
// once.
func (s *Service) SendDue(ctx context.Context, cfg SenderConfig) (int, error) {
	cfg.defaults()
	return s.runner(cfg).RunOnce(ctx)
}

// recordTimeout bounds the recording of an outcome once the sender's
// context has ended.
const recordTimeout = 5 * time.Second

// runner is the jobs runner that RunSender and SendDue run.
func (s *Service) runner(cfg SenderConfig) *jobs.Runner[*switchboard.Wake] {
	holder := "wake/" + s.InstanceID
	return &jobs.Runner[*switchboard.Wake]{
		Name: "wake", Bus: s.bus, Subject: switchboard.WakeSubject, Concurrency: cfg.Concurrency, Poll: cfg.Poll, Log: s.log,
		Claim: func(ctx context.Context, max int) ([]*switchboard.Wake, error) {
			return s.store.ClaimWakes(ctx, holder, max, cfg.Timeout+30*time.Second)
		},
		Do: func(ctx context.Context, w *switchboard.Wake) {
			// Outcomes are recorded even when ctx ends: a wake left sending
			// would wait out its lease before anyone sent it again.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.Timeout+recordTimeout)
			defer cancel()
			j := &wakeJob{s: s, w: w, holder: holder, rctx: rctx,
				log: s.log.With("wake_id", w.ID, "agent_id", w.AgentID, "context_id", w.ContextID, "kind", w.Kind, "tasks", len(w.TaskIDs))}
			j.run(ctx, cfg.Timeout)
		},
	}
}

// pruneLoop deletes finished wakes older than keep, at once and then
// hourly, until ctx ends.
func (s *Service) pruneLoop(ctx context.Context, keep time.Duration) {
	tick := time.NewTicker(time.Hour)
	defer tick.Stop()
	for {
		if _, err := s.store.PruneWakes(ctx, s.Now().Add(-keep)); err != nil && ctx.Err() == nil {
			s.log.Warn("prune wakes", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// wakeJob is one attempt of a claimed wake.
type wakeJob struct {
	s      *Service
	w      *switchboard.Wake
	holder string
	log    *slog.Logger
	rctx   context.Context // records the outcome; outlives a shutdown
}

// run makes the attempt and records its outcome.
func (j *wakeJob) run(ctx context.Context, timeout time.Duration) {
	agent, err := j.s.agents.FindAgentByID(ctx, j.w.AgentID)
	var cfg *switchboard.WakeConfig
	if err == nil {
		cfg, err = j.s.store.FindWakeConfig(ctx, j.w.AgentID)
	}
	switch {
	case ctx.Err() != nil:
		j.giveBack()
	case switchboard.ErrorCode(err) == switchboard.ENOTFOUND:
		j.log.Info("wake_dropped", "reason", "the agent or its wake configuration is gone")
		j.finish(switchboard.WakeDropped, 0, "the agent or its wake configuration is gone")
	case err == nil && agent.AccountDisabled:
		// A disabled account's agents are not served: nothing of a peer's
		// reaches its receiver, not even a wake queued before.
		j.log.Info("wake_dropped", "reason", "the agent's account is disabled")
		j.finish(switchboard.WakeDropped, 0, "the agent's account is disabled")
	case err != nil:
		j.log.Warn("read the wake's agent", "err", err) // the lease ends and it is sent again
	default:
		actx, cancel := context.WithTimeout(ctx, timeout)
		res, err := j.s.waker.Wake(actx, agent, cfg, j.w)
		cancel()
		if res != nil {
			res.Body = answerText(res.Body, cfg)
		}
		j.record(ctx, res, err)
	}
}

// record records what came of the request.
func (j *wakeJob) record(ctx context.Context, res *Result, err error) {
	switch {
	case err != nil && ctx.Err() != nil:
		j.giveBack()
	case err != nil && errors.Is(err, ErrRefused):
		j.log.Warn("wake_refused", "err", err)
		j.finish(switchboard.WakeFailed, 0, err.Error())
	case err != nil:
		j.retry(0, "", err.Error())
	case res.Status/100 == 2:
		j.log.Info("wake_sent", "status", res.Status)
		j.finish(switchboard.WakeSent, res.Status, "")
	case res.Status == http.StatusTooManyRequests || res.Status == http.StatusServiceUnavailable:
		j.retry(res.Status, res.RetryAfter, "HTTP "+strconv.Itoa(res.Status))
	default:
		j.log.Warn("wake_failed", "status", res.Status, "body", res.Body)
		j.finish(switchboard.WakeFailed, res.Status, "HTTP "+strconv.Itoa(res.Status)+": "+res.Body)
	}
}

// redactAnswer cuts secrets out of the start of a receiver's answer before
// it is logged and kept as the wake's last error: a receiver may echo the
// request, key and signature included. The configuration's own key and
// hmac secret are cut wherever they appear, then whatever RedactSecrets
// recognizes.
func redactAnswer(body string, cfg *switchboard.WakeConfig) string {
	for _, secret := range []string{cfg.Key, cfg.HMACSecret} {
		if len(secret) >= 4 {
			body = strings.ReplaceAll(body, secret, redact.Cut(secret))
		}
	}
	return redact.Secrets(body)
}

// retryBackoff is the wait before a wake is sent again after 429, 503 or
// no answer: RetryMin, doubling with each retry, or the receiver's longer
// Retry-After, at most RetryMax.
var retryBackoff = jobs.Backoff{Min: RetryMin, Max: RetryMax}

// retry queues the wake again after its backoff, or drops it past
// switchboard.WakeMaxRetries.
func (j *wakeJob) retry(status int, retryAfter, lastErr string) {
	if j.w.Retries >= switchboard.WakeMaxRetries {
		j.log.Warn("wake_dropped", "status", status, "retries", j.w.Retries, "err", lastErr)
		j.finish(switchboard.WakeDropped, status, lastErr)
		return
	}
	now := j.s.Now()
	ra, _ := jobs.ParseRetryAfter(retryAfter, now)
	wait := retryBackoff.Wait(j.w.Retries+1, ra)
	j.log.Info("wake_requeued", "status", status, "retry_in", wait, "err", lastErr)
	if _, err := j.s.store.RetryWake(j.rctx, j.w.ID, j.holder, now.Add(wait), true, status, lastErr); err != nil {
		j.log.Warn("record wake outcome", "err", err)
		return
	}
	j.s.outcome("retried")
}

// giveBack returns a wake that a shutdown cut short to pending, due at
// once, without counting a retry: the receiver is not at fault.
func (j *wakeJob) giveBack() {
	if _, err := j.s.store.RetryWake(j.rctx, j.w.ID, j.holder, j.s.Now(), false, j.w.LastStatus, j.w.LastError); err != nil {
		j.log.Warn("give back a wake cut short by shutdown", "err", err)
	}
}

func (j *wakeJob) finish(state switchboard.WakeState, status int, lastErr string) {
	if _, err := j.s.store.FinishWake(j.rctx, j.w.ID, j.holder, state, status, lastErr); err != nil {
		j.log.Warn("record wake outcome", "err", err)
		return
	}
	j.s.outcome(string(state))
}
