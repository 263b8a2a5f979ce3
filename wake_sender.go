package switchboard

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// WakeSenderConfig tunes RunSender and SendDue. Zero values mean defaults.
type WakeSenderConfig struct {
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

func (c *WakeSenderConfig) defaults() {
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
// request. It reads the queue when told (WakeSubject) and every Poll, and
// prunes finished wakes older than Keep once an hour.
func (s *WakeService) RunSender(ctx context.Context, cfg WakeSenderConfig) error {
	cfg.defaults()
	w, err := s.bus.Watch(ctx, WakeSubject)
	if err != nil {
		return err
	}
	defer w.Close()
	poll := time.NewTicker(cfg.Poll)
	defer poll.Stop()
	var pruned time.Time
	for {
		n, err := s.SendDue(ctx, cfg)
		if err != nil && ctx.Err() == nil {
			s.log.Warn("claim wakes", "err", err)
		}
		if now := s.Now(); now.Sub(pruned) > time.Hour {
			pruned = now
			if _, err := s.store.PruneWakes(ctx, now.Add(-cfg.Keep)); err != nil && ctx.Err() == nil {
				s.log.Warn("prune wakes", "err", err)
			}
		}
		if n == cfg.Concurrency && ctx.Err() == nil {
			continue // there may be more due now
		}
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-w.C():
			if !ok {
				return ErrBusClosed
			}
		case <-poll.C:
		}
	}
}

// wakeRecordTimeout bounds the recording of an outcome once the sender's
// context has ended.
const wakeRecordTimeout = 5 * time.Second

// SendDue claims the wakes due now (at most cfg.Concurrency), sends them
// concurrently and records each outcome. It returns how many it claimed.
// If ctx ends meanwhile, the wakes it cut short go back to pending, due at
// once.
func (s *WakeService) SendDue(ctx context.Context, cfg WakeSenderConfig) (int, error) {
	cfg.defaults()
	holder := "wake/" + s.InstanceID
	wakes, err := s.store.ClaimWakes(ctx, holder, cfg.Concurrency, cfg.Timeout+30*time.Second)
	if err != nil {
		return 0, err
	}
	var wg sync.WaitGroup
	for _, w := range wakes {
		// Outcomes are recorded even when ctx ends: a wake left sending
		// would wait out its lease before anyone sent it again.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.Timeout+wakeRecordTimeout)
		j := &wakeJob{s: s, w: w, holder: holder, rctx: rctx,
			log: s.log.With("wake_id", w.ID, "agent_id", w.AgentID, "context_id", w.ContextID, "kind", w.Kind, "tasks", len(w.TaskIDs))}
		wg.Go(func() {
			defer cancel()
			j.run(ctx, cfg.Timeout)
		})
	}
	wg.Wait()
	return len(wakes), nil
}

// wakeJob is one attempt of a claimed wake.
type wakeJob struct {
	s      *WakeService
	w      *Wake
	holder string
	log    *slog.Logger
	rctx   context.Context // records the outcome; outlives a shutdown
}

// run makes the attempt and records its outcome.
func (j *wakeJob) run(ctx context.Context, timeout time.Duration) {
	agent, err := j.s.agents.FindAgentByID(ctx, j.w.AgentID)
	var cfg *WakeConfig
	if err == nil {
		cfg, err = j.s.store.FindWakeConfig(ctx, j.w.AgentID)
	}
	switch {
	case ctx.Err() != nil:
		j.giveBack()
	case ErrorCode(err) == ENOTFOUND:
		j.log.Info("wake_dropped", "reason", "the agent or its wake configuration is gone")
		j.finish(WakeDropped, 0, "the agent or its wake configuration is gone")
	case err != nil:
		j.log.Warn("read the wake's agent", "err", err) // the lease ends and it is sent again
	default:
		actx, cancel := context.WithTimeout(ctx, timeout)
		res, err := j.s.waker.Wake(actx, agent, cfg, j.w)
		cancel()
		if res != nil {
			res.Body = redactAnswer(res.Body, cfg)
		}
		j.record(ctx, res, err)
	}
}

// record records what came of the request.
func (j *wakeJob) record(ctx context.Context, res *WakeResult, err error) {
	switch {
	case err != nil && ctx.Err() != nil:
		j.giveBack()
	case err != nil && errors.Is(err, ErrWakeRefused):
		j.log.Warn("wake_refused", "err", err)
		j.finish(WakeFailed, 0, err.Error())
	case err != nil:
		j.retry(0, "", err.Error())
	case res.Status/100 == 2:
		j.log.Info("wake_sent", "status", res.Status)
		j.finish(WakeSent, res.Status, "")
	case res.Status == http.StatusTooManyRequests || res.Status == http.StatusServiceUnavailable:
		j.retry(res.Status, res.RetryAfter, "HTTP "+strconv.Itoa(res.Status))
	default:
		j.log.Warn("wake_failed", "status", res.Status, "body", res.Body)
		j.finish(WakeFailed, res.Status, "HTTP "+strconv.Itoa(res.Status)+": "+res.Body)
	}
}

// redactAnswer cuts secrets out of the start of a receiver's answer before
// it is logged and kept as the wake's last error: a receiver may echo the
// request, key and signature included. The configuration's own key and
// hmac secret are cut wherever they appear, then whatever RedactSecrets
// recognizes.
func redactAnswer(body string, cfg *WakeConfig) string {
	for _, secret := range []string{cfg.Key, cfg.HMACSecret} {
		if len(secret) >= 4 {
			body = strings.ReplaceAll(body, secret, cut(secret))
		}
	}
	return RedactSecrets(body)
}

// retry queues the wake again after Retry-After, or drops it past
// WakeMaxRetries.
func (j *wakeJob) retry(status int, retryAfter, lastErr string) {
	if j.w.Retries >= WakeMaxRetries {
		j.log.Warn("wake_dropped", "status", status, "retries", j.w.Retries, "err", lastErr)
		j.finish(WakeDropped, status, lastErr)
		return
	}
	now := j.s.Now()
	wait := RetryAfter(retryAfter, now)
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

func (j *wakeJob) finish(state WakeState, status int, lastErr string) {
	if _, err := j.s.store.FinishWake(j.rctx, j.w.ID, j.holder, state, status, lastErr); err != nil {
		j.log.Warn("record wake outcome", "err", err)
		return
	}
	j.s.outcome(string(state))
}

// RetryAfter reads a Retry-After header for a wake, clamped to
// WakeRetryAfterMin–WakeRetryAfterMax; absent or unreadable, it is
// WakeRetryAfterDefault.
func RetryAfter(header string, now time.Time) time.Duration {
	d, ok := ParseRetryAfter(header, now)
	if !ok {
		d = WakeRetryAfterDefault
	}
	return min(max(d, WakeRetryAfterMin), WakeRetryAfterMax)
}

// ParseRetryAfter reads a Retry-After header: a number of seconds, or an
// HTTP date relative to now (negative when it is past). ok is false when
// the header is absent or unreadable. Waits longer than a week are cut to
// a week; callers bound them further.
func ParseRetryAfter(header string, now time.Time) (wait time.Duration, ok bool) {
	header = strings.TrimSpace(header)
	const week = 7 * 24 * time.Hour
	if n, err := strconv.ParseInt(header, 10, 64); err == nil && n >= 0 {
		return time.Duration(min(n, int64(week/time.Second))) * time.Second, true
	}
	if t, err := http.ParseTime(header); err == nil {
		return min(t.Sub(now), week), true
	}
	return 0, false
}
